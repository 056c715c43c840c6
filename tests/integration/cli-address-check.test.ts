/**
 * The CLI checks the address it connects to, not only the name (issue 47, item 3): a host a server
 * chose (a redirect, a mirror, a Metalink's URL) that resolves, or rebinds, to a local address is
 * never connected to, while the host the user chose may be anywhere. Names come from
 * tests/support/public-names.cjs: `*.public.test` are public (a NAT brings them to 127.0.0.1),
 * `*.rebind.test` resolve to 127.0.0.2, `*.flip.test` to the public address first and 127.0.0.2
 * after. The servers on 127.0.0.2 count every connection: a check that came too late would show.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runStitch, type CliResult } from '../support/cli';
import { contentBytes, contentSha256 } from '../support/content';
import { metalinkXml } from '../support/metalink-doc';
import { startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';

const SIZE = 300_000;
let dir: string;
let closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stitch-address-'));
});
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
  await rm(dir, { recursive: true, force: true });
});

async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  closers.push(() => m.close());
  return m;
}

interface Local {
  port: number;
  /** TCP connections accepted. */
  readonly connections: number;
}

/** A server on `host` that answers with the test file (fileHandler) or with `handler`; `port` 0 takes any free one. */
async function serve(host: string, port: number, handler?: (req: IncomingMessage, res: ServerResponse) => void): Promise<Local> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer(handler ?? fileHandler(51));
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
  };
}

/** Serves the `size` bytes of `seed`, whole or the range asked for. */
function fileHandler(seed: number, { size = SIZE, headers = {} }: { size?: number; headers?: Record<string, string> } = {}) {
  const body = contentBytes(seed, 0, size);
  return (req: IncomingMessage, res: ServerResponse) => {
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const end = range?.[2] ? Math.min(Number(range[2]) + 1, size) : size;
    const common = { ...headers, 'Accept-Ranges': 'bytes', ETag: `"${seed}"`, 'Content-Length': String(end - start) };
    if (range) res.writeHead(206, { ...common, 'Content-Range': `bytes ${start}-${end - 1}/${size}` });
    else res.writeHead(200, common);
    res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end));
  };
}

/** Runs the CLI with the test names; it must end by itself within 5 s. */
async function stitch(args: string[]): Promise<CliResult> {
  const started = Date.now();
  const result = await runStitch(args, dir, { timeoutMs: 15_000, publicNames: true });
  expect(result.timedOut, 'the CLI had to be killed after 15 s').toBe(false);
  expect(Date.now() - started).toBeLessThan(5000);
  return result;
}

/** The URL of `m` with `host` for its address. */
const named = (m: Mirror, host: string) => m.url.replace('127.0.0.1', host);

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

const refused = (host: string) => `${host} resolved to 127.0.0.2, a local or private network address, and the download is not`;

describe('a host a server chose that resolves to a local address is not connected to', () => {
  it('a redirect: the download fails at once and says why', async () => {
    const local = await serve('127.0.0.2', 0);
    const lan = `http://lan.rebind.test:${local.port}/f.bin`;
    const primary = await mirror({ size: SIZE, seed: 51, redirect: { location: lan } });
    const result = await stitch(['get', named(primary, 'www.public.test'), '-o', 'f.bin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`stitch: failed: ${refused('lan.rebind.test')}`);
    expect(local.connections).toBe(0);
    expect(await readdir(dir)).not.toContain('f.bin');
  });

  it('a mirror given with -m: not used, and the file comes whole from the primary', async () => {
    const local = await serve('127.0.0.2', 0);
    const primary = await mirror({ size: SIZE, seed: 51 });
    const result = await stitch([
      'get',
      named(primary, 'www.public.test'),
      '-m',
      `http://lan.rebind.test:${local.port}/f.bin`,
      '-o',
      'f.bin',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`stitch: mirror http://lan.rebind.test:${local.port}/f.bin was dropped: ${refused('lan.rebind.test')}`);
    expect(local.connections).toBe(0);
    expect(await sha256(join(dir, 'f.bin'))).toBe(await contentSha256(51, SIZE));
  });

  /** A remote Metalink at meta.public.test whose a.bin is at `urls`; the CLI's result. */
  async function metalink(urls: (file: Mirror, local: Local) => string[]) {
    const local = await serve('127.0.0.2', 0);
    const file = await mirror({ size: SIZE, seed: 51, path: '/a.bin' });
    const body = new TextEncoder().encode(metalinkXml([{ name: 'a.bin', urls: urls(file, local) }]));
    const meta = await mirror({ size: body.length, body, path: '/f.meta4' });
    const result = await stitch(['get', named(meta, 'meta.public.test'), '-o', 'a.bin']);
    return { result, local };
  }

  it("a Metalink file's other URL: not used, and the file comes from its public one", async () => {
    const { result, local } = await metalink((file, lan) => [named(file, 'files.public.test'), `http://lan.rebind.test:${lan.port}/a.bin`]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(refused('lan.rebind.test'));
    expect(local.connections).toBe(0);
    expect(await sha256(join(dir, 'a.bin'))).toBe(await contentSha256(51, SIZE));
  });

  // The first URL of a remote Metalink file becomes its download's own URL (targets.ts): the job's
  // door judges it against the Metalink file's URL, which the user chose (trustUrl). Its other URLs
  // are checked against the first one's bytes, so with the first refused the download stops, saying why.
  it("a Metalink file's first URL: refused before it connects, and the download says why", async () => {
    const { result, local } = await metalink((file, lan) => [`http://lan.rebind.test:${lan.port}/a.bin`, named(file, 'files.public.test')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(refused('lan.rebind.test'));
    expect(local.connections).toBe(0);
  });

  it('a name that rebinds: the first connection reaches the public address, a later one is refused before it connects', async () => {
    // One port on both addresses: the public side (through the NAT, 127.0.0.1) closes every
    // connection after its answer, so each request (a file of several blocks) resolves the name again.
    const outside = await serve('127.0.0.1', 0, fileHandler(51, { size: 4_000_000, headers: { Connection: 'close' } }));
    const local = await serve('127.0.0.2', outside.port);
    const cdn = `http://cdn.flip.test:${outside.port}/f.bin`;
    const primary = await mirror({ size: SIZE, seed: 51, redirect: { location: cdn } });
    const result = await stitch(['get', named(primary, 'www.public.test'), '-o', 'f.bin']);
    expect(outside.connections).toBeGreaterThan(0);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`stitch: failed: ${refused('cdn.flip.test')}`);
    expect(local.connections).toBe(0);
  });
});

describe('the host the user chose may be on a local address', () => {
  it('a name that resolves to 127.0.0.2 downloads, its redirects to itself too', async () => {
    const local = await serve('127.0.0.2', 0, (req, res) => {
      if (req.url === '/f.bin') res.writeHead(302, { Location: '/file.bin' }).end();
      else fileHandler(51)(req, res);
    });
    const result = await stitch(['get', `http://nas.rebind.test:${local.port}/f.bin`, '-o', 'f.bin']);
    expect(result.code, result.stderr).toBe(0);
    expect(local.connections).toBeGreaterThan(0);
    expect(await sha256(join(dir, 'f.bin'))).toBe(await contentSha256(51, SIZE));
  });
});
