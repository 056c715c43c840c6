/**
 * The mirror test server: one file of deterministic content (see content.ts) served over real HTTP
 * on 127.0.0.1, with ranges, validators, rate limits, latency, TCP's slow start and window, a limit on
 * connections, and injectable faults. Used by the integration tests and the benchmarks; `stats` records
 * what every request got and the most connections open at once.
 */
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { Readable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { BodyPacing } from './body-pacing';
import { CongestionWindow } from './congestion-window';
import { CONTENT_CHUNK, contentBytes } from './content';
import { TokenBucket } from './token-bucket';

/**
 * Misbehaviours; each applies to every response, or only to the first `faultRequests` ones. The
 * byte thresholds (reset/stall/truncateAfterBytes) fire only when the body is longer than N.
 */
export interface Faults {
  /** Counts requests since the last setFaults (or start); faults apply only to the first N. */
  faultRequests?: number;
  /** Destroy the socket once N body bytes of a response were handed to the kernel. */
  resetAfterBytes?: number;
  /** Destroy the socket N ms after a response's body started. */
  resetAfterMs?: number;
  /** Stop sending after N body bytes; the socket stays open until the client or close() ends it. */
  stallAfterBytes?: number;
  /** No Content-Length (chunked); end the response cleanly after N bytes: a silently short body. */
  truncateAfterBytes?: number;
  /** Add this to Content-Length; the real body is sent, then the socket is closed. */
  lieContentLength?: number;
  /** Answer 200 with the whole file; still says `Accept-Ranges: bytes`. */
  ignoreRanges?: boolean;
  /** Answer 200 with the whole file and `Accept-Ranges: none`. */
  acceptRangesNone?: boolean;
  /** On a 206, Content-Range claims positions shifted by this many bytes; the body is right. */
  wrongContentRange?: number;
  /** Answer every request that has a Range header with 416 `bytes *\/size`. */
  status416?: boolean;
  /** Answer with this status (empty body) and optional Retry-After. */
  errorStatus?: { status: number; retryAfter?: string };
  /** Once this many requests (counted from setFaults) were received, the file is replaced. */
  changeAfterRequests?: number;
  /** `Content-Encoding: gzip` over the selected bytes (on a 206: the range, gzipped). */
  gzip?: boolean;
  /** Destroy the socket as soon as the request arrives, before any header. */
  refuse?: boolean;
}

export interface MirrorOptions {
  size: number;
  seed?: number;
  /**
   * Serves these bytes (e.g. a real video) instead of generated content; `size` must be their
   * length. setContent and changeAfterRequests switch to generated content.
   */
  body?: Uint8Array;
  /** The file's path; any other path is a 404. Default '/file.bin'. */
  path?: string;
  /** Sends `Content-Disposition: attachment; filename*=UTF-8''…` when set; a function names each URL by its query. */
  filename?: string | ((query: URLSearchParams) => string);
  /** Strong ETag; default derived from seed and size; null: none. */
  etag?: string | null;
  /** Last-Modified; default a fixed date derived from the seed; null: none. */
  lastModified?: string | null;
  contentType?: string;
  /** Bytes/s shared by all connections of this server. */
  rate?: number;
  /** Bytes/s of each connection. */
  connectionRate?: number;
  /**
   * The client's access link: mirrors given the same bucket share its rate (the bottleneck of a
   * download from several fast mirrors is usually the user's own line, not any one server).
   */
  link?: TokenBucket;
  /** Delay before a response's headers. */
  latencyMs?: number;
  /** The round trip of slowStart and windowBytes; default latencyMs. */
  rttMs?: number;
  /**
   * Emulates TCP slow start per connection: 10 segments of 1460 B in the first round trip, doubling
   * each round trip that used its window, again from 10 segments after 200 ms without sending.
   */
  slowStart?: boolean;
  /** Bytes per round trip of each connection at most (a far server's window), with or without slow start. */
  windowBytes?: number;
  /**
   * At most `max` connections open at once are served; a request on any other connection gets 503
   * (with Retry-After when given) and the connection is closed.
   */
  connectionLimit?: { max: number; retryAfter?: string };
  extraHeaders?: Record<string, string>;
  faults?: Faults;
  /** Default 0: any free port. */
  port?: number;
  /** Serves https:// with this key and certificate (PEM), e.g. tests/support/tls/loopback.*.pem. */
  tls?: { key: string; cert: string };
  /**
   * Hotlink protection: a request whose Referer is not this (string: equal; RegExp: matches) is
   * answered 403 with an empty body.
   */
  requireReferer?: string | RegExp;
  /** Every request for the file is answered with this redirect (302 unless said). */
  redirect?: { location: string; status?: number };
  /** `GET /set-cookie` answers a small page with this Set-Cookie header (a site's session). */
  setCookie?: string;
}

export interface MirrorRequest {
  method: string;
  path: string;
  range: string | undefined;
  ifRange: string | undefined;
  /** The Referer header, if any. */
  referer: string | undefined;
  /** The Cookie header, if any. */
  cookie: string | undefined;
  /** 0 while no header was sent (or never, e.g. `refuse`). */
  status: number;
  /** Body bytes written for this response (compressed ones when gzip). */
  bytesSent: number;
  startedAt: number;
  endedAt: number | undefined;
  /** The response did not complete: the client went away or a fault cut it. */
  aborted: boolean;
  /** With slowStart or windowBytes: the connection's window when the body started, in bytes per round trip. */
  windowBytes?: number;
}

export interface MirrorStats {
  requests: MirrorRequest[];
  /** Body bytes written across all requests. */
  bytesSent: number;
  /** TCP connections accepted. */
  connections: number;
  /** The most TCP connections open at once. */
  peakConnections: number;
}

export interface ContentChange {
  seed: number;
  /** Default derived from the new seed and size; null: none. */
  etag?: string | null;
  /** Default derived from the new seed; null: none. */
  lastModified?: string | null;
  size?: number;
}

export interface Mirror {
  /** Full URL of the file. */
  readonly url: string;
  readonly origin: string;
  readonly port: number;
  readonly stats: MirrorStats;
  /** Replaces all faults and restarts the request count they use. */
  setFaults(faults: Faults): void;
  setRate(bytesPerSec: number | undefined): void;
  /** The file changes on the server; responses already started keep their content. */
  setContent(change: ContentChange): void;
  resetStats(): void;
  /** Cuts every open connection at once, as a reset would, mid-response or idle. */
  dropConnections(): void;
  /** The server goes silent for good: open and new responses send no more body bytes; sockets stay open. */
  stallAll(): void;
  /** Stops listening and destroys every open socket. */
  close(): Promise<void>;
}

export function defaultEtag(seed: number, size: number): string {
  return `"${seed.toString(36)}-${size.toString(36)}"`;
}

export function defaultLastModified(seed: number): string {
  return new Date(Date.UTC(2024, 0, 1) + seed * 60_000).toUTCString();
}

/** The file a mirror serves: generated content of a seed, its size and validators. */
export interface Content {
  seed: number;
  size: number;
  etag: string | null;
  lastModified: string | null;
}

/** The file after `change`, from one of `size` bytes; its validators default to the new seed's. */
export function changedContent(change: ContentChange, size: number): Content {
  const newSize = change.size ?? size;
  return {
    seed: change.seed,
    size: newSize,
    etag: change.etag === undefined ? defaultEtag(change.seed, newSize) : change.etag,
    lastModified: change.lastModified === undefined ? defaultLastModified(change.seed) : change.lastModified,
  };
}

/**
 * A mirror's faults over its requests: they apply to every request, or only to the first `faultRequests`
 * counted since they were set; once `changeAfterRequests` requests were received, the file is replaced
 * (another seed, with new validators where it had some).
 */
export class FaultSchedule {
  private faults: Faults;
  private count = 0;
  private changed = false;

  constructor(faults: Faults = {}) {
    this.faults = { ...faults };
  }

  /** Replaces all faults and restarts the request count. */
  set(faults: Faults): void {
    this.faults = { ...faults };
    this.count = 0;
    this.changed = false;
  }

  /** A request was received while `content` is served: its faults, and the file's change it brings about, if any. */
  next(content: Content): { faults: Faults; change?: ContentChange } {
    const all = this.faults;
    const index = this.count++;
    let change: ContentChange | undefined;
    if (all.changeAfterRequests !== undefined && !this.changed && index >= all.changeAfterRequests) {
      this.changed = true;
      change = {
        seed: content.seed + 1000,
        etag: content.etag === null ? null : undefined,
        lastModified: content.lastModified === null ? null : undefined,
      };
    }
    return { faults: all.faultRequests === undefined || index < all.faultRequests ? all : {}, change };
  }
}

/** Where the faults cut a response's body, and how; a cut fires only when the body is longer than its threshold. */
export function bodyCut(fx: Faults): { at: number; how: 'reset' | 'stall' | 'truncate' } | undefined {
  const cuts = [fx.resetAfterBytes, fx.stallAfterBytes, fx.truncateAfterBytes].filter((n) => n !== undefined);
  if (cuts.length === 0) return undefined;
  const at = Math.min(...cuts);
  return { at, how: at === fx.resetAfterBytes ? 'reset' : at === fx.truncateAfterBytes ? 'truncate' : 'stall' };
}

type Range = { start: number; end: number };

/**
 * The bytes a GET of `content` answers under the faults: the range asked (206) when it may be served, else
 * the whole file (200), or 'unsatisfiable' (416).
 */
export function servedRange(
  request: { range: string | undefined; ifRange: string | undefined },
  content: Content,
  fx: Faults,
): (Range & { partial: boolean }) | 'unsatisfiable' {
  if (request.range !== undefined) {
    if (fx.status416) return 'unsatisfiable';
    if (!fx.ignoreRanges && !fx.acceptRangesNone && ifRangeMatches(request.ifRange, content)) {
      const parsed = parseRange(request.range, content.size);
      if (parsed === 'unsatisfiable') return parsed;
      if (parsed) return { ...parsed, partial: true };
    }
  }
  return { start: 0, end: content.size, partial: false };
}

/** A 206's Content-Range, shifted by `wrongContentRange` when that fault applies. */
export function contentRange(range: Range, size: number, fx: Faults): string {
  const shift = fx.wrongContentRange ?? 0;
  return `bytes ${range.start + shift}-${range.end - 1 + shift}/${size}`;
}

/** A single `bytes=` range; undefined when the header must be ignored (malformed, multi-range). */
export function parseRange(header: string, size: number): Range | 'unsatisfiable' | undefined {
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size };
  }
  const start = Number(first);
  const lastPos = last === '' ? Infinity : Number(last);
  if (lastPos < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(lastPos + 1, size) };
}

/** Whether an If-Range validator lets a range be served from `content` (RFC 9110 §13.1.5: strong ETags and dates only). */
export function ifRangeMatches(value: string | undefined, content: Pick<Content, 'etag' | 'lastModified'>): boolean {
  if (value === undefined) return true;
  const v = value.trim();
  if (v.startsWith('"') || v.startsWith('W/')) {
    return content.etag !== null && !content.etag.startsWith('W/') && v === content.etag;
  }
  return content.lastModified !== null && v === content.lastModified;
}

function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function refererAllowed(referer: string | undefined, required: string | RegExp): boolean {
  if (referer === undefined) return false;
  return typeof required === 'string' ? referer === required : required.test(referer);
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resolves once everything written to the socket so far was handed to the kernel. */
const flushSocket = (socket: Socket) => new Promise<void>((resolve) => socket.write(new Uint8Array(0), () => resolve()));

const drained = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });

/** The content's bytes [start, end) in pieces aligned to content chunks. */
export async function* contentSource(seed: number, start: number, end: number): AsyncGenerator<Uint8Array> {
  for (let pos = start; pos < end;) {
    const stop = Math.min(end, (Math.floor(pos / CONTENT_CHUNK) + 1) * CONTENT_CHUNK);
    yield contentBytes(seed, pos, stop);
    pos = stop;
  }
}

/** Bytes [start, end) of a given body, in content-chunk pieces (the rate limiter's unit). */
async function* bodySource(body: Uint8Array, start: number, end: number): AsyncGenerator<Uint8Array> {
  for (let pos = start; pos < end; pos += CONTENT_CHUNK) yield body.subarray(pos, Math.min(end, pos + CONTENT_CHUNK));
}

export async function startMirror(options: MirrorOptions): Promise<Mirror> {
  if (options.body && options.body.length !== options.size)
    throw new RangeError(`size ${options.size} is not the body's length ${options.body.length}`);
  let body = options.body;
  const filePath = options.path ?? '/file.bin';
  const initialSeed = options.seed ?? 1;
  let content: Content = {
    seed: initialSeed,
    size: options.size,
    etag: options.etag === undefined ? defaultEtag(initialSeed, options.size) : options.etag,
    lastModified: options.lastModified === undefined ? defaultLastModified(initialSeed) : options.lastModified,
  };
  const faults = new FaultSchedule(options.faults);
  let stalledAll = false;
  const serverBucket = new TokenBucket(options.rate);
  const connectionBuckets = new WeakMap<Socket, TokenBucket>();
  const windows = new WeakMap<Socket, CongestionWindow>();
  const rttMs = options.rttMs ?? options.latencyMs ?? 0;
  const emulatesWindow = options.slowStart === true || options.windowBytes !== undefined;
  if (emulatesWindow && !(rttMs > 0)) throw new RangeError('slowStart and windowBytes need a round trip: set rttMs or latencyMs');
  const extra = options.extraHeaders ?? {};
  const sockets = new Set<Socket>();
  /** The connections served under connectionLimit. */
  const admitted = new Set<Socket>();
  const stats: MirrorStats = { requests: [], bytesSent: 0, connections: 0, peakConnections: 0 };

  const setContent = (change: ContentChange) => {
    body = undefined;
    content = changedContent(change, content.size);
  };

  const sendEmpty = (res: ServerResponse, record: MirrorRequest, status: number, headers: OutgoingHttpHeaders) => {
    record.status = status;
    res.writeHead(status, { ...headers, ...extra, 'Content-Length': '0' });
    res.end();
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const socket = req.socket;
    const record: MirrorRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] ?? '/',
      range: req.headers.range,
      ifRange: single(req.headers['if-range']),
      referer: req.headers.referer,
      cookie: req.headers.cookie,
      status: 0,
      bytesSent: 0,
      startedAt: Date.now(),
      endedAt: undefined,
      aborted: false,
    };
    stats.requests.push(record);
    let closed = false;
    res.on('error', () => {});
    res.on('close', () => {
      closed = true;
      record.endedAt = Date.now();
      record.aborted = !res.writableFinished;
    });

    const { faults: fx, change } = faults.next(content);
    if (change) setContent(change);
    const c = content;

    if (fx.refuse) {
      socket.destroy();
      return;
    }
    if (options.latencyMs) await sleep(options.latencyMs);
    if (closed) return;

    const limit = options.connectionLimit;
    if (limit && !admitted.has(socket)) {
      if (admitted.size >= limit.max) {
        const retry = limit.retryAfter === undefined ? {} : { 'Retry-After': limit.retryAfter };
        return sendEmpty(res, record, 503, { ...retry, Connection: 'close' });
      }
      admitted.add(socket);
      socket.on('close', () => admitted.delete(socket));
    }

    if (options.setCookie !== undefined && record.path === '/set-cookie') {
      record.status = 200;
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Set-Cookie': options.setCookie });
      res.end('<!doctype html><title>signed in</title><p>signed in');
      return;
    }
    if (record.path !== filePath) return sendEmpty(res, record, 404, {});
    if (options.redirect) return sendEmpty(res, record, options.redirect.status ?? 302, { Location: options.redirect.location });
    if (record.method !== 'GET' && record.method !== 'HEAD') {
      return sendEmpty(res, record, 405, { Allow: 'GET, HEAD' });
    }
    if (options.requireReferer !== undefined && !refererAllowed(record.referer, options.requireReferer)) {
      return sendEmpty(res, record, 403, {});
    }
    if (fx.errorStatus) {
      const { status, retryAfter } = fx.errorStatus;
      return sendEmpty(res, record, status, retryAfter === undefined ? {} : { 'Retry-After': retryAfter });
    }

    const headers: OutgoingHttpHeaders = {
      'Content-Type': options.contentType ?? 'application/octet-stream',
      'Accept-Ranges': fx.acceptRangesNone ? 'none' : 'bytes',
    };
    if (c.etag !== null) headers.ETag = c.etag;
    if (c.lastModified !== null) headers['Last-Modified'] = c.lastModified;
    const filename =
      typeof options.filename === 'function' ? options.filename(new URL(req.url ?? '/', 'http://x').searchParams) : options.filename;
    if (filename !== undefined) headers['Content-Disposition'] = `attachment; filename*=UTF-8''${encodeRfc5987(filename)}`;
    const unsatisfiable = { ...headers, 'Content-Range': `bytes */${c.size}` };

    const range = servedRange(record, c, fx);
    if (range === 'unsatisfiable') return sendEmpty(res, record, 416, unsatisfiable);
    const partial = range.partial;
    const length = range.end - range.start;
    if (partial) headers['Content-Range'] = contentRange(range, c.size, fx);
    if (fx.gzip) headers['Content-Encoding'] = 'gzip';
    if (!fx.gzip && fx.truncateAfterBytes === undefined) {
      headers['Content-Length'] = String(length + (fx.lieContentLength ?? 0));
    }
    record.status = partial ? 206 : 200;
    res.writeHead(record.status, { ...headers, ...extra });
    if (record.method === 'HEAD') {
      res.end();
      return;
    }

    let source: AsyncIterable<Uint8Array> = body ? bodySource(body, range.start, range.end) : contentSource(c.seed, range.start, range.end);
    if (fx.gzip) {
      const gzip = createGzip();
      pipeline(Readable.from(source), gzip, () => {});
      source = gzip;
    }
    if (fx.resetAfterMs !== undefined) {
      const timer = setTimeout(() => socket.destroy(), fx.resetAfterMs);
      res.on('close', () => clearTimeout(timer));
    }
    let connectionBucket: TokenBucket | undefined;
    if (options.connectionRate !== undefined) {
      connectionBucket = connectionBuckets.get(socket);
      if (!connectionBucket) connectionBuckets.set(socket, (connectionBucket = new TokenBucket(options.connectionRate)));
    }
    let window: CongestionWindow | undefined;
    if (emulatesWindow) {
      window = windows.get(socket);
      if (!window) {
        const maxWindow = options.windowBytes ?? Infinity;
        windows.set(socket, (window = new CongestionWindow({ rttMs, slowStart: options.slowStart === true, maxWindow })));
      }
      window.restartIfIdle(performance.now());
      record.windowBytes = window.bytes;
    }
    const cut = bodyCut(fx);
    const cutAt = cut?.at ?? Infinity;

    const pacing = new BodyPacing([serverBucket, connectionBucket, options.link], window, () => performance.now(), sleep);
    let sent = 0;
    for await (const chunk of source) {
      for (let offset = 0; offset < chunk.length;) {
        if (closed) return;
        if (stalledAll) {
          res.flushHeaders();
          return; // stallAll(): leave the response open, silent
        }
        if (sent >= cutAt) {
          // The fault fires only when the body is longer than its threshold.
          res.flushHeaders();
          await flushSocket(socket);
          if (closed) return;
          if (cut?.how === 'reset') socket.destroy();
          else if (cut?.how === 'truncate') res.end();
          return; // stall: leave the response open
        }
        const n = await pacing.take(Math.min(chunk.length - offset, cutAt - sent), () => closed || stalledAll);
        if (n === 0) continue;
        const piece = chunk.subarray(offset, offset + n);
        offset += n;
        sent += n;
        record.bytesSent += n;
        stats.bytesSent += n;
        if (!res.write(piece)) await drained(res);
      }
    }
    if (closed) return;
    if (fx.lieContentLength) {
      await flushSocket(socket);
      socket.destroy();
    } else {
      res.end();
    }
  }

  const serve = (req: IncomingMessage, res: ServerResponse) => void handle(req, res).catch(() => req.socket.destroy());
  const server = options.tls ? createTlsServer({ ...options.tls, noDelay: true }, serve) : createServer({ noDelay: true }, serve);
  server.on('connection', (socket: Socket) => {
    stats.connections++;
    sockets.add(socket);
    stats.peakConnections = Math.max(stats.peakConnections, sockets.size);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  let closing: Promise<void> | undefined;

  return {
    url: origin + filePath,
    origin,
    port,
    stats,
    setFaults(f) {
      faults.set(f);
    },
    setRate: (rate) => serverBucket.setRate(rate),
    setContent,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    stallAll() {
      stalledAll = true;
    },
    resetStats() {
      stats.requests = [];
      stats.bytesSent = 0;
      stats.connections = 0;
      stats.peakConnections = sockets.size;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
