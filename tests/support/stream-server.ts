/**
 * A loopback server of a folder (an HLS stream's playlists, segments and keys), with Range
 * requests and the loopback mirror's model of a path (body-pacing.ts): a rate shared by the
 * server's connections, a rate per connection, latency. Faults by file: a segment answering 404 a
 * few times before it appears (a CDN still filling), a connection reset or a stall in a body.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { afterEach, beforeEach } from 'vitest';
import type { Socket } from 'node:net';
import { startHostile } from './hostile-server';
import { readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { BodyPacing } from './body-pacing';
import { TokenBucket } from './token-bucket';

export interface StreamFaults {
  /** Answer 404 to the first N requests of the file. */
  notFoundTimes?: number;
  /** Destroy the socket after N body bytes, on the first `times` responses (default 1). */
  resetAfterBytes?: number;
  /** Stop sending after N body bytes (the socket stays open), on the first `times` responses. */
  stallAfterBytes?: number;
  times?: number;
}

export interface StreamServerOptions {
  /** The folder served. */
  root: string;
  /**
   * Files served from memory instead, by path (e.g. a master playlist naming several hosts); a
   * function makes the file anew for each request (a live playlist whose window slides).
   */
  files?: Record<string, string | Uint8Array | (() => string)>;
  /** Bytes/s shared by all connections. */
  rate?: number;
  /** Bytes/s of each connection. */
  connectionRate?: number;
  latencyMs?: number;
  /** Faults by path (`/v0/seg3.ts`). */
  faults?: Record<string, StreamFaults>;
  /** Answers every request with the whole file (200), as a server that does not do ranges. */
  ignoreRanges?: boolean;
}

export interface StreamRequest {
  path: string;
  range: string | undefined;
  status: number;
  bytesSent: number;
  /** When the request came (performance.now()). */
  startedAt: number;
  /** When the response ended (performance.now()), complete or cut; undefined while it is open. */
  endedAt: number | undefined;
}

export interface StreamServer {
  readonly origin: string;
  readonly requests: StreamRequest[];
  /** TCP connections accepted, and the most open at once. */
  readonly connections: number;
  readonly peakConnections: number;
  /** The server goes silent: no more body bytes for anyone, open or new. */
  stallAll(): void;
  /** Changes the rate all connections share, from now on (undefined: unlimited). */
  setRate(bytesPerSecond: number | undefined): void;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.m3u8': 'application/vnd.apple.mpegurl',
  '.ts': 'video/mp2t',
  '.m4s': 'video/iso.segment',
  '.mp4': 'video/mp4',
  '.key': 'application/octet-stream',
  '.html': 'text/html; charset=utf-8',
};

export async function startStreamServer(options: StreamServerOptions): Promise<StreamServer> {
  const requests: StreamRequest[] = [];
  const served = new Map<string, number>();
  const serverBucket = new TokenBucket(options.rate);
  const connectionBuckets = new WeakMap<Socket, TokenBucket>();
  let stalled = false;
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

  const bytesOf = (path: string): Uint8Array | undefined => {
    const inMemory = options.files?.[path];
    const given = typeof inMemory === 'function' ? inMemory() : inMemory;
    if (given !== undefined) return typeof given === 'string' ? Buffer.from(given) : given;
    const file = normalize(join(options.root, decodeURIComponent(path)));
    if (!file.startsWith(options.root + sep)) return undefined;
    return statSync(file, { throwIfNoEntry: false })?.isFile() ? readFileSync(file) : undefined;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    const record: StreamRequest = {
      path,
      range: req.headers.range,
      status: 0,
      bytesSent: 0,
      startedAt: performance.now(),
      endedAt: undefined,
    };
    requests.push(record);
    let closed = false;
    res.on('error', () => {});
    res.on('close', () => {
      closed = true;
      record.endedAt = performance.now();
    });
    if (options.latencyMs) await sleep(options.latencyMs);
    const count = (served.get(path) ?? 0) + 1;
    served.set(path, count);
    const faults = options.faults?.[path] ?? {};
    const bytes = bytesOf(path);
    if (!bytes || count <= (faults.notFoundTimes ?? 0)) {
      record.status = 404;
      res.writeHead(404, { 'Content-Length': '0' }).end();
      return;
    }
    const size = bytes.length;
    const etag = `"${size.toString(16)}-${path.length}"`;
    let start = 0;
    let end = size;
    let status = 200;
    const range = options.ignoreRanges ? null : /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      if (range[1] === '') start = Math.max(0, size - Number(range[2]));
      else {
        start = Number(range[1]);
        end = range[2] === '' ? size : Math.min(size, Number(range[2]) + 1);
      }
      if (start >= size || end <= start) {
        record.status = 416;
        res.writeHead(416, { 'Content-Range': `bytes */${size}`, 'Content-Length': '0' }).end();
        return;
      }
      status = 206;
    }
    record.status = status;
    res.writeHead(status, {
      'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream',
      'Content-Length': String(end - start),
      ...(options.ignoreRanges ? {} : { 'Accept-Ranges': 'bytes' }),
      ETag: etag,
      ...(status === 206 ? { 'Content-Range': `bytes ${start}-${end - 1}/${size}` } : {}),
    });
    const faulty = count <= (faults.times ?? 1);
    const socket = req.socket;
    let connectionBucket = connectionBuckets.get(socket);
    if (!connectionBucket) connectionBuckets.set(socket, (connectionBucket = new TokenBucket(options.connectionRate)));
    const pacing = new BodyPacing([serverBucket, connectionBucket], undefined, () => performance.now(), sleep);
    let position = start;
    while (position < end) {
      const sent = position - start;
      if (faulty && faults.resetAfterBytes !== undefined && sent >= faults.resetAfterBytes) {
        socket.destroy();
        return;
      }
      if (stalled || (faulty && faults.stallAfterBytes !== undefined && sent >= faults.stallAfterBytes)) {
        if (!closed) await new Promise<void>((resolve) => res.on('close', resolve));
        return;
      }
      const cap = Math.min(
        end - position,
        faulty && faults.resetAfterBytes !== undefined ? faults.resetAfterBytes - sent : Infinity,
        faulty && faults.stallAfterBytes !== undefined ? faults.stallAfterBytes - sent : Infinity,
      );
      const n = await pacing.take(cap, () => closed || stalled);
      if (closed) return;
      if (n === 0) continue;
      const chunk = bytes.subarray(position, position + n);
      position += n;
      record.bytesSent += n;
      if (!res.write(chunk)) await new Promise<void>((resolve) => res.once('drain', resolve));
    }
    res.end();
  }

  const server = await startHostile((req, res) => void handle(req, res));
  return {
    origin: server.origin,
    requests,
    get connections() {
      return server.connections;
    },
    get peakConnections() {
      return server.peakConnections;
    },
    stallAll: () => (stalled = true),
    setRate: (bytesPerSecond) => serverBucket.setRate(bytesPerSecond),
    close: () => server.close(),
  };
}

/**
 * For a test file of stream downloads: each test gets a fresh folder (`bed.dir`, removed after it)
 * and starts stream servers with `bed.serve` (closed after it).
 */
export function streamTestBed(prefix: string): { readonly dir: string; serve: (options: StreamServerOptions) => Promise<StreamServer> } {
  let dir = '';
  const servers: StreamServer[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    await rm(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    serve: async (options) => {
      const server = await startStreamServer(options);
      servers.push(server);
      return server;
    },
  };
}
