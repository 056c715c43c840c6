import type { BrowserStore } from '../../storage/stored-blob-url';
import { attachmentDisposition } from './content-disposition';
import type { SaveFeed } from './save-feed';
import { SAVE_PATH } from './job-saver';
import type { PlaybackJobs } from '../playback/playback';
import { sendableEnd } from './save-hold-back';
import { storedBody, type StoredBodyDeps } from '../playback/stored-body';
import { plain, routeJobId, type StreamScope } from '../playback/stream-route';

export interface SaveRouteDeps extends StoredBodyDeps {
  store: () => Promise<Pick<BrowserStore, 'read' | 'readBlobs'>>;
  jobs: () => Promise<Pick<PlaybackJobs, 'get' | 'bytesFreed'>>;
  /** Largest piece read from the store at once. */
  maxChunk?: number;
  /** Blocks just stored, from memory, and whether bytes sent were replaced since (see save-feed.ts). */
  feed: SaveFeed;
  /** Bytes the browser's download of a save URL has written so far, or undefined (default: chrome.downloads). */
  written?: (saveUrl: string) => Promise<number | undefined>;
  /** How often, at most, the browser is asked how far it wrote. */
  writtenEveryMs?: number;
}

/** Asking the browser how far its download is costs a message to the browser process: a few times a second is enough. */
const WRITTEN_EVERY_MS = 250;
/** Bytes of a stored Blob read into memory at once (the store's files may hand one of up to MAX_CHUNK). */
const READ_BYTES = 4 * 1024 * 1024;

/** The job's states in which a save's stream waits on: it may still complete. */
const GOING = new Set(['queued', 'running', 'verifying', 'saving', 'saved']);
/** Complete and verified (a complete job's view is saving until the browser wrote it). */
const VERIFIED = new Set(['saving', 'saved']);
/**
 * Bytes located per read transaction. While the job downloads, a read transaction waits behind
 * the write transactions in flight on the same object store: 4 MiB per read let the save fall to
 * about 10 MB/s during a 1 GiB download (the rest came after the last byte, at about 200 MB/s).
 * One read locates this many bytes as Blob handles (no bytes in memory); they are then read one
 * record per pull.
 */
const MAX_CHUNK = 128 * 1024 * 1024;

/**
 * Chrome: the worker answers a save frame's navigation (chrome-extension://<id>/save/<jobId>)
 * with the job's whole file as an attachment, in order as it is stored, so the browser writes
 * the file while Stitch downloads it. The last bytes wait until the job is verified
 * (save-hold-back.ts); if the job stops, fails, or forgets bytes already sent or being read (a
 * piece failed its check: the feed sees it at the store, save-feed.ts), the body fails before its
 * next piece, so before the held-back bytes, and the job manager cancels the browser's download,
 * which deletes its partial file. Called synchronously at the worker's start, beside the stream route.
 */
export function installSaveRoute(scope: Pick<StreamScope, 'location' | 'addEventListener'>, deps: SaveRouteDeps): void {
  scope.addEventListener('fetch', (event) => {
    const jobId = saveJobId(event.request.url, scope.location.origin);
    if (jobId === undefined) return;
    event.respondWith(
      answerSave(deps, jobId, event.request.url).catch((error: unknown) =>
        plain(500, error instanceof Error ? error.message : String(error)),
      ),
    );
  });
}

/** The job id of a save URL of this origin, or undefined for any other URL. */
export function saveJobId(url: string, origin: string): string | undefined {
  return routeJobId(url, origin, SAVE_PATH);
}

export async function answerSave(deps: SaveRouteDeps, jobId: string, url?: string): Promise<Response> {
  const jobs = await deps.jobs();
  const view = jobs.get(jobId);
  if (!view) return plain(404, 'no such download; it may have been cleared');
  if (jobs.bytesFreed(jobId)) return plain(410, 'the file was saved and its stored copy freed');
  const size = view.size;
  if (size === undefined) return plain(409, 'the size of the file is not known yet');
  const unavailable = deps.feed.unavailable(jobId);
  if (unavailable) return plain(409, unavailable);
  const verified = () => VERIFIED.has(jobs.get(jobId)?.state ?? '');
  const unfeed = deps.feed.open(jobId, 0);
  let handed = 0;
  const releaseBehind = url === undefined ? () => {} : releaser(deps, jobId, url);
  const body = storedBody(deps, {
    jobId,
    size,
    range: { start: 0, end: size },
    maxChunk: deps.maxChunk ?? MAX_CHUNK,
    read: (id, start, end) => savedBytes(deps, id, start, end),
    stopped: () => {
      const now = jobs.get(jobId);
      if (!now || !GOING.has(now.state) || jobs.bytesFreed(jobId)) return 'the download stopped';
      return deps.feed.spoiled(jobId);
    },
    sendableEnd: () => sendableEnd(size, verified()),
    sent: (end) => {
      handed = end;
      deps.feed.advance(jobId, end);
      releaseBehind();
    },
    closed: () => unfeed(handed === size),
  });
  return new Response(body, {
    status: 200,
    headers: {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(size),
      'Content-Disposition': attachmentDisposition(view.filename),
      'Cache-Control': 'no-store',
    },
  });
}

/**
 * Release-behind: after the save hands bytes over, asks the browser (at most every
 * WRITTEN_EVERY_MS, one question at a time) how far its download wrote, and lets the feed give
 * the store's chunks behind that back. bytesReceived is what the download's file holds, so only
 * bytes the browser has are released, never ones still in its pipes (the feed also bounds them by
 * what was handed over).
 */
function releaser(deps: SaveRouteDeps, jobId: string, url: string): () => void {
  const written = deps.written ?? browserWritten;
  const every = deps.writtenEveryMs ?? WRITTEN_EVERY_MS;
  let asked = -Infinity;
  let asking = false;
  return () => {
    if (asking || Date.now() - asked < every) return;
    asking = true;
    asked = Date.now();
    void written(url)
      .then((bytes) => (bytes === undefined ? undefined : deps.feed.written(jobId, bytes)))
      .catch(() => {})
      .finally(() => (asking = false));
  };
}

interface DownloadsSearch {
  downloads?: { search(query: { url?: string; finalUrl?: string }): Promise<{ state: string; bytesReceived: number }[]> };
}

/** Chrome: bytes written by the download under way of `url` (the least, if several), or undefined. */
async function browserWritten(url: string): Promise<number | undefined> {
  const api = (globalThis as { chrome?: DownloadsSearch }).chrome?.downloads;
  if (!api) return undefined;
  let items = await api.search({ url });
  if (items.length === 0) items = await api.search({ finalUrl: url });
  const going = items.filter((item) => item.state === 'in_progress');
  return going.length === 0 ? undefined : Math.min(...going.map((item) => item.bytesReceived));
}

/** Bytes [start, end): those just stored from memory, the rest from the store. */
async function* savedBytes(deps: SaveRouteDeps, jobId: string, start: number, end: number): AsyncIterable<Uint8Array> {
  let pos = start;
  while (pos < end) {
    const block = deps.feed.take(jobId, pos, end - pos);
    if (!block) break;
    yield block;
    pos += block.length;
  }
  if (pos === end) return;
  deps.feed.reading(jobId, pos, end);
  yield* blobBytes(deps, jobId, pos, end);
}

/** The stored Blobs of [start, end), located in one read transaction, then read up to READ_BYTES per pull. */
async function* blobBytes(deps: SaveRouteDeps, jobId: string, start: number, end: number): AsyncIterable<Uint8Array> {
  for (const blob of await (await deps.store()).readBlobs(jobId, start, end)) {
    for (let at = 0; at < blob.size; at += READ_BYTES) yield new Uint8Array(await blob.slice(at, at + READ_BYTES).arrayBuffer());
  }
}
