import { STREAM_PATH } from '../../messages';
import { mediaTypeOf } from '../../media-type';
import type { BrowserStore } from '../../storage/stored-blob-url';
import { ElementReads, type ElementRead } from './element-reads';
import type { PlaybackHub, PlaybackJobs } from './playback';
import { storedBody } from './stored-body';
import { answerHeaders, answerRange, firstMissing, parseRangeHeader, storedRunAt } from './stream-range';

export interface StreamRouteDeps {
  hub: PlaybackHub;
  jobs: () => Promise<PlaybackJobs>;
  store: () => Promise<Pick<BrowserStore, 'read'>>;
  /** A response fails when no byte it waits for was stored for this long. */
  waitMs?: number;
  /** Largest piece read from the store at once (the body is pulled piece by piece). */
  maxChunk?: number;
}

const WAIT_MS = 60_000;
const MAX_CHUNK = 1024 * 1024;
/** A page's reads are forgotten this long after its last one stopped. */
const FORGET_MS = 60_000;
const HOPELESS = new Set(['failed', 'cancelled']);

/** The service worker's global scope, as far as the route uses it. */
export interface StreamScope {
  readonly location: { readonly origin: string };
  readonly clients: { claim(): Promise<void> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install', listener: () => void): void;
  addEventListener(type: 'activate', listener: (event: { waitUntil(promise: Promise<unknown>): void }) => void): void;
  addEventListener(
    type: 'fetch',
    listener: (event: { request: Request; clientId?: string; respondWith(response: Promise<Response>): void }) => void,
  ): void;
}

/**
 * Chrome: the extension's service worker answers a job's stream URL
 * (chrome-extension://<id>/stream/<jobId>) from the stored bytes, so a <video> on an extension
 * page plays while the job downloads. Must be called synchronously at the worker's start (a
 * worker woken by a fetch must have its listener in place). Every other fetch passes through
 * untouched: respondWith is not called for it.
 */
export function installStreamRoute(scope: StreamScope, deps: StreamRouteDeps): void {
  // A new worker takes over open player pages at once (they wait for their controller).
  scope.addEventListener('install', () => void scope.skipWaiting());
  scope.addEventListener('activate', (event) => event.waitUntil(scope.clients.claim()));
  const route = new StreamRoute(deps);
  scope.addEventListener('fetch', (event) => {
    const jobId = streamJobId(event.request.url, scope.location.origin);
    if (jobId === undefined) return;
    const answer = route.answer(event.request, jobId, event.clientId ?? '');
    event.respondWith(answer.catch((error: unknown) => plain(500, error instanceof Error ? error.message : String(error))));
  });
}

/** The job id of a stream URL of this origin, or undefined for any other URL. */
export function streamJobId(url: string, origin: string): string | undefined {
  return routeJobId(url, origin, STREAM_PATH);
}

/** The job id of a URL `<origin><path><jobId>`, or undefined for any other URL. */
export function routeJobId(url: string, origin: string, path: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  // Not URL.origin: it is "null" for chrome-extension: URLs outside Chrome.
  if (`${parsed.protocol}//${parsed.host}` !== origin || !parsed.pathname.startsWith(path)) return undefined;
  const id = decodeURIComponent(parsed.pathname.slice(path.length));
  return id === '' || id.includes('/') ? undefined : id;
}

/**
 * Answers range requests for stream URLs. Chrome takes the Content-Length of an extension
 * URL's response as the length of the whole resource (it does not treat a short 206 as "ask
 * again from here", as it does over HTTP: playback ended where the first answer ended), so
 * every answer covers the whole requested range, and its body is pulled from the store piece
 * by piece, waiting for bytes still in flight: a progressive response, at most one piece in
 * memory. The leading response of each page (client) tells the engine where that player needs
 * bytes next, as soon as it is asked (a seek moves it at once; a re-read of the old position
 * does not: `ElementReads`); waits end on the job's events.
 */
export class StreamRoute {
  /** Each page's reads, by job and client; forgotten FORGET_MS after the last one stopped. */
  private readonly clients = new Map<string, ElementReads>();

  constructor(private readonly deps: StreamRouteDeps) {}

  async answer(request: Request, jobId: string, clientId = ''): Promise<Response> {
    if (request.method !== 'GET') return plain(405, 'only GET');
    const { hub } = this.deps;
    const jobs = await this.deps.jobs();
    const deadline = Date.now() + (this.deps.waitMs ?? WAIT_MS);
    let view = jobs.get(jobId);
    // The size comes with the server's first answer; a player may ask before it.
    while (view && view.size === undefined && !HOPELESS.has(view.state) && Date.now() < deadline) {
      await hub.nextChange(jobId, deadline - Date.now());
      view = jobs.get(jobId);
    }
    if (!view) return plain(404, 'no such download; it may have been cleared');
    if (jobs.bytesFreed(jobId)) return plain(410, 'the file was saved and its stored copy freed');
    const size = view.size;
    if (size === undefined) return plain(503, 'the size of the file is not known yet', { 'Retry-After': '1' });
    const contentType = mediaTypeOf(view.contentType, view.filename) ?? 'application/octet-stream';
    const wanted = parseRangeHeader(request.headers.get('Range'), size);
    const whole = answerRange(wanted, size, [{ start: 0, end: size }], Infinity);
    if (whole.kind !== 'serve') return new Response(null, { status: 416, headers: answerHeaders(whole, size, contentType) });
    const player = `stream:${clientId}`;
    const first = firstMissing(await hub.storedRanges(jobId), whole.start, size);
    const reads = this.readsOf(`${jobId} ${player}`);
    const read = reads.open(whole.start);
    // Only the leading read moves the player's position (an older one the element has not
    // cancelled yet, or asks again, must not pull it back); a seek's does before the element reads.
    const tell = (position: number | undefined) => {
      if (position !== undefined) void hub.need(jobId, player, position);
    };
    const need = (position: number | undefined) => {
      read.wants = position;
      if (reads.leads(read)) tell(position);
    };
    const stopped = () => {
      const lead = reads.close(read, Date.now());
      if (lead) tell(lead.wants);
    };
    need(first);
    const body = this.body(jobId, size, whole, jobs, read, need, stopped);
    return new Response(body, { status: whole.status, headers: answerHeaders(whole, size, contentType) });
  }

  /** A page's reads of a job; pages whose reads all stopped long ago are forgotten meanwhile. */
  private readsOf(key: string): ElementReads {
    const now = Date.now();
    for (const [other, reads] of this.clients)
      if (reads.idleSince !== undefined && now - reads.idleSince > FORGET_MS) this.clients.delete(other);
    let reads = this.clients.get(key);
    if (!reads) this.clients.set(key, (reads = new ElementReads()));
    return reads;
  }

  /** The bytes `range` as they are stored (see storedBody); `read` follows its progress. */
  private body(
    jobId: string,
    size: number,
    range: { start: number; end: number },
    jobs: PlaybackJobs,
    read: ElementRead,
    need: (position: number | undefined) => void,
    stopped: () => void,
  ): ReadableStream<Uint8Array> {
    return storedBody(this.deps, {
      jobId,
      size,
      range,
      maxChunk: this.deps.maxChunk ?? MAX_CHUNK,
      waitMs: this.deps.waitMs ?? WAIT_MS,
      // Stored bytes are served even when the job stopped; only a wait for more is hopeless.
      stopped: (stored, pos) => {
        if (storedRunAt(stored, pos)) return undefined;
        const view = jobs.get(jobId);
        return !view || HOPELESS.has(view.state) || jobs.bytesFreed(jobId) ? 'the download stopped' : undefined;
      },
      need,
      sent: (end) => (read.pos = end),
      closed: stopped,
    });
  }
}

export function plain(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers } });
}
