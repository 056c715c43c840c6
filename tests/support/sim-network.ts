import type { HttpFetch, HttpRequest, HttpResponse } from '../../src/engine';
import { BodyPacing } from './body-pacing';
import { CongestionWindow } from './congestion-window';
import type { FakeClock } from './fake-clock';
import {
  bodyCut,
  changedContent,
  contentRange,
  contentSource,
  FaultSchedule,
  servedRange,
  type Content,
  type ContentChange,
  type Faults,
  type MirrorOptions,
  type MirrorRequest,
  type MirrorStats,
} from './mirror-server';
import { TokenBucket } from './token-bucket';

/** What a simulated server takes of the loopback mirror's options: the path's model, and the file. */
export type SimServerOptions = Pick<
  MirrorOptions,
  | 'size'
  | 'seed'
  | 'etag'
  | 'lastModified'
  | 'rate'
  | 'connectionRate'
  | 'latencyMs'
  | 'rttMs'
  | 'slowStart'
  | 'windowBytes'
  | 'connectionLimit'
> & { faults?: SimFaults };

/**
 * The loopback mirror's faults (mirror-server.ts, `Faults`) that the simulation models: the same meaning,
 * the same request count (`faultRequests`, `changeAfterRequests`), the same helpers.
 */
export type SimFaults = Pick<Faults, (typeof SIM_FAULTS)[number]>;
const SIM_FAULTS = [
  'faultRequests',
  'errorStatus',
  'refuse',
  'resetAfterBytes',
  'stallAfterBytes',
  'changeAfterRequests',
  'ignoreRanges',
  'wrongContentRange',
] as const satisfies readonly (keyof Faults)[];

/** The faults, refusing one the simulation does not model (a MirrorOptions' Faults may carry any). */
function modeled(faults: SimFaults = {}): SimFaults {
  const other = Object.keys(faults).filter((name) => !(SIM_FAULTS as readonly string[]).includes(name));
  if (other.length > 0) throw new TypeError(`the simulated network does not model these faults: ${other.join(', ')}`);
  return faults;
}

/** The CLI's client closes a connection idle this long (src/cli/http1-client.ts); the next request opens another. */
const CLIENT_IDLE_MS = 4000;

/** One TCP connection of the simulation: its window and rate survive from one request to the next. */
interface SimConnection {
  window: CongestionWindow | undefined;
  bucket: TokenBucket | undefined;
  idleSince: number;
  /** Counted against the server's connection limit. */
  admitted: boolean;
  /** Breaks the request or body on it now (a reset). */
  cut?: () => void;
}

const FILE_PATH = '/file.bin';

const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
const aborted = () => new DOMException('This operation was aborted', 'AbortError');

/**
 * A server of the simulated network: the loopback mirror's model of a path (mirror-server.ts: rates,
 * latency, TCP slow start and windows, a connection limit, validators and ranges, resets and stalls)
 * on a virtual clock, with no socket. Its `stats` are the mirror's.
 */
export class SimServer {
  readonly url: string;
  readonly stats: MirrorStats = { requests: [], bytesSent: 0, connections: 0, peakConnections: 0 };
  private readonly bucket: TokenBucket;
  private readonly idle: SimConnection[] = [];
  private readonly open = new Set<SimConnection>();
  private admitted = 0;
  private stalled = false;
  private content: Content;
  private readonly faults: FaultSchedule;

  constructor(
    readonly origin: string,
    private readonly clock: FakeClock,
    private readonly options: SimServerOptions,
  ) {
    this.url = origin + FILE_PATH;
    this.content = changedContent({ seed: options.seed ?? 1, etag: options.etag, lastModified: options.lastModified }, options.size);
    this.faults = new FaultSchedule(modeled(options.faults));
    this.bucket = new TokenBucket(options.rate, undefined, () => clock.now());
  }

  setRate(bytesPerSec: number | undefined): void {
    this.bucket.setRate(bytesPerSec);
  }

  /** Replaces all faults and restarts the request count they use. */
  setFaults(faults: SimFaults): void {
    this.faults.set(modeled(faults));
  }

  /** The file changes on the server; responses already started keep their content. */
  setContent(change: ContentChange): void {
    this.content = changedContent(change, this.content.size);
  }

  /** The server goes silent for good: open and new responses send no more body bytes. */
  stallAll(): void {
    this.stalled = true;
  }

  /** Cuts every open connection at once, mid-response or idle. */
  dropConnections(): void {
    for (const connection of [...this.open]) {
      const cut = connection.cut;
      this.close(connection);
      cut?.();
    }
  }

  /** Serves one request as the loopback mirror would, on a connection of the pool the client keeps. */
  async serve(url: URL, init: HttpRequest = {}): Promise<HttpResponse> {
    const { signal } = init;
    if (signal?.aborted) throw aborted();
    const connection = this.connection();
    const headers = new Map(Object.entries(init.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
    const record: MirrorRequest = {
      method: init.method ?? 'GET',
      path: url.pathname,
      range: headers.get('range'),
      ifRange: headers.get('if-range'),
      referer: undefined,
      cookie: undefined,
      status: 0,
      bytesSent: 0,
      startedAt: this.clock.now(),
      endedAt: undefined,
      aborted: false,
    };
    this.stats.requests.push(record);
    const end = (broken: boolean) => {
      record.endedAt ??= this.clock.now();
      record.aborted ||= broken;
    };
    const { faults: fx, change } = this.faults.next(this.content);
    if (change) this.setContent(change);
    const content = this.content;
    if (fx.refuse) {
      // The connection is cut as the request arrives, before any header.
      this.close(connection);
      end(true);
      throw reset();
    }

    // The request and the answer's first byte take the latency; a reset or an abort meanwhile ends it.
    await new Promise<void>((resolve, reject) => {
      const cancel = this.clock.after(this.options.latencyMs ?? 0, done(resolve));
      const onAbort = () => done(() => (this.close(connection), reject(aborted())))();
      connection.cut = done(() => reject(reset()));
      signal?.addEventListener('abort', onAbort, { once: true });
      function done(then: () => void) {
        return () => {
          cancel();
          signal?.removeEventListener('abort', onAbort);
          then();
        };
      }
    }).catch((error: unknown) => {
      end(true);
      throw error;
    });

    const limit = this.options.connectionLimit;
    if (limit && !connection.admitted) {
      if (this.admitted >= limit.max) {
        this.close(connection);
        end(false);
        return this.answer(record, url, 503, { connection: 'close', ...(limit.retryAfter ? { 'retry-after': limit.retryAfter } : {}) });
      }
      connection.admitted = true;
      this.admitted++;
    }
    if (url.pathname !== FILE_PATH) return this.finish(connection, record, end, this.answer(record, url, 404, {}));
    if (fx.errorStatus) {
      const { status, retryAfter } = fx.errorStatus;
      const error = this.answer(record, url, status, retryAfter === undefined ? {} : { 'retry-after': retryAfter });
      return this.finish(connection, record, end, error);
    }

    const size = content.size;
    const fileHeaders: Record<string, string> = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
    if (content.etag !== null) fileHeaders.etag = content.etag;
    if (content.lastModified !== null) fileHeaders['last-modified'] = content.lastModified;
    const range = servedRange(record, content, fx);
    if (range === 'unsatisfiable') {
      const unsatisfiable = this.answer(record, url, 416, { ...fileHeaders, 'content-range': `bytes */${size}` });
      return this.finish(connection, record, end, unsatisfiable);
    }
    if (range.partial) fileHeaders['content-range'] = contentRange(range, size, fx);
    fileHeaders['content-length'] = String(range.end - range.start);
    if (record.method === 'HEAD') return this.finish(connection, record, end, this.answer(record, url, 200, fileHeaders));
    const body = this.body(connection, record, content.seed, range, bodyCut(fx), signal, end);
    return this.answer(record, url, range.partial ? 206 : 200, fileHeaders, body);
  }

  /** The pool: the client reuses its most recently idle connection, as the CLI's does, while it is not timed out. */
  private connection(): SimConnection {
    const now = this.clock.now();
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      if (now - connection.idleSince <= CLIENT_IDLE_MS) return connection;
      this.close(connection);
    }
    const { rttMs, latencyMs, slowStart, windowBytes, connectionRate } = this.options;
    const rtt = rttMs ?? latencyMs ?? 0;
    const window =
      slowStart || windowBytes !== undefined
        ? new CongestionWindow({ rttMs: rtt, slowStart: slowStart === true, maxWindow: windowBytes ?? Infinity })
        : undefined;
    const connection: SimConnection = {
      window,
      bucket: connectionRate === undefined ? undefined : new TokenBucket(connectionRate, undefined, () => this.clock.now()),
      idleSince: now,
      admitted: false,
    };
    this.open.add(connection);
    this.stats.connections++;
    this.stats.peakConnections = Math.max(this.stats.peakConnections, this.open.size);
    return connection;
  }

  private close(connection: SimConnection): void {
    if (!this.open.delete(connection)) return;
    if (connection.admitted) this.admitted--;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
  }

  private release(connection: SimConnection): void {
    if (!this.open.has(connection)) return;
    connection.cut = undefined;
    connection.idleSince = this.clock.now();
    this.idle.push(connection);
  }

  private finish(connection: SimConnection, record: MirrorRequest, end: (broken: boolean) => void, response: HttpResponse): HttpResponse {
    end(false);
    this.release(connection);
    return response;
  }

  private answer(
    record: MirrorRequest,
    url: URL,
    status: number,
    headers: Record<string, string>,
    body: ReadableStream<Uint8Array> | null = null,
  ): HttpResponse {
    record.status = status;
    return {
      status,
      statusText: '',
      ok: status >= 200 && status < 300,
      url: url.href,
      headers: { get: (name) => headers[name.toLowerCase()] ?? (body === null && name.toLowerCase() === 'content-length' ? '0' : null) },
      body,
    };
  }

  /**
   * The range's bytes, paced as the loopback mirror paces them; ends with a reset, an abort or, when stalled,
   * never. A fault's cut (a reset or a stall) fires once that many bytes were sent, when the body is longer.
   */
  private body(
    connection: SimConnection,
    record: MirrorRequest,
    seed: number,
    range: { start: number; end: number },
    cut: ReturnType<typeof bodyCut>,
    signal: AbortSignal | undefined,
    end: (broken: boolean) => void,
  ): ReadableStream<Uint8Array> {
    const window = connection.window;
    window?.restartIfIdle(this.clock.now());
    record.windowBytes = window?.bytes;
    const pacing = new BodyPacing(
      [this.bucket, connection.bucket],
      window,
      () => this.clock.now(),
      (ms) => this.clock.sleep(ms),
    );
    let closed = false;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        const fail = (error: Error) => {
          if (closed) return;
          closed = true;
          end(true);
          this.close(connection);
          controller.error(error);
        };
        connection.cut = () => fail(reset());
        signal?.addEventListener('abort', () => fail(aborted()), { once: true });
        const cutAt = cut?.at ?? Infinity;
        let sent = 0;
        void (async () => {
          for await (const chunk of contentSource(seed, range.start, range.end)) {
            for (let offset = 0; offset < chunk.length;) {
              if (closed || this.stalled) return;
              if (sent >= cutAt) {
                if (cut?.how === 'reset') fail(reset());
                return; // a stall: the response stays open and silent
              }
              const n = await pacing.take(Math.min(chunk.length - offset, cutAt - sent), () => closed || this.stalled);
              if (closed || this.stalled) return;
              controller.enqueue(chunk.slice(offset, offset + n));
              offset += n;
              sent += n;
              record.bytesSent += n;
              this.stats.bytesSent += n;
            }
          }
          if (closed) return;
          closed = true;
          controller.close();
          end(false);
          this.release(connection);
        })();
      },
      cancel: () => {
        if (closed) return;
        closed = true;
        end(true);
        this.close(connection);
      },
    });
  }
}

/**
 * A simulated network for the engine's loop, in the spirit of undici's MockAgent: servers named
 * http://mirror-N.sim, each paced by the loopback mirror's model, reached by `fetch`, all on one
 * virtual clock (fake-clock.ts), so that a scenario of seconds runs in milliseconds and the same way
 * every time. The real-socket tests and `npm run bench` stay the outer ring.
 */
export class SimNetwork {
  readonly servers: SimServer[] = [];

  constructor(readonly clock: FakeClock) {}

  serve(options: SimServerOptions): SimServer {
    const server = new SimServer(`http://mirror-${this.servers.length + 1}.sim`, this.clock, options);
    this.servers.push(server);
    return server;
  }

  readonly fetch: HttpFetch = async (url, init) => {
    const parsed = new URL(url);
    const server = this.servers.find((s) => s.origin === parsed.origin);
    if (!server)
      throw Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    return server.serve(parsed, init);
  };
}
