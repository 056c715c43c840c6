/**
 * The CLI's trust boundaries against hostile loopback servers: answers its client refuses by
 * rule, content codings, a remote Metalink file that aims at private addresses, and plain-http
 * sources of an https download. Each case ends within 5 s, under 200 MB, with the exact file or a
 * plain message, and nothing is requested that the rules refuse. Names under `.public.test` are
 * public hosts on loopback: they resolve to a public address, which a NAT step of the test's
 * turns into 127.0.0.1 after the CLI checked it (tests/support/public-names.cjs).
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runStitch, type CliOptions, type CliResult } from '../support/cli';
import { contentBytes, contentSha256 } from '../support/content';
import { startHostile, type HostileServer } from '../support/hostile-server';
import { metalinkXml } from '../support/metalink-doc';
import { startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';

const MB = 1e6;
let root: string;
let dir: string;
let outside: string;
let closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'stitch-trust-'));
  dir = join(root, 'work');
  outside = join(root, 'outside');
  await mkdir(dir);
  await mkdir(outside);
});
afterEach(async () => {
  await Promise.all(closers.map((close) => close()));
  closers = [];
  await rm(root, { recursive: true, force: true });
});

async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  closers.push(() => m.close());
  return m;
}

async function hostile(handler: Parameters<typeof startHostile>[0]): Promise<HostileServer> {
  const server = await startHostile(handler);
  closers.push(() => server.close());
  return server;
}

/** A server that writes its own bytes on the socket: `answer(n, head)` for the n-th request (from 1). */
async function rawServer(answer: (n: number, head: string, socket: Socket) => void): Promise<{ port: number; requests: string[] }> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let head = '';
    socket.on('data', (data: Buffer) => {
      head += data.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      requests.push(head);
      answer(requests.length, head, socket);
      head = '';
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as { port: number }).port, requests };
}

/** Runs the CLI in `dir`; it must end by itself within 5 s and 200 MB, touching nothing outside `dir`. */
async function stitch(args: string[], options: CliOptions = {}): Promise<CliResult & { seconds: number }> {
  const started = Date.now();
  const result = await runStitch(args, dir, { timeoutMs: 15_000, ...options });
  const seconds = (Date.now() - started) / 1000;
  expect(result.timedOut, 'the CLI had to be killed after 15 s').toBe(false);
  expect(seconds).toBeLessThan(5);
  expect(result.peakRssBytes).toBeLessThan(200 * MB);
  expect(await readdir(outside)).toEqual([]);
  return { ...result, seconds };
}

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

/** A 206 answer of `body`'s bytes that the request's Range asks for (all of them without one). */
function partial(head: string, body: Uint8Array): { headers: string; bytes: Uint8Array } {
  const range = /^range: bytes=(\d+)-(\d*)/im.exec(head);
  const start = range ? Number(range[1]) : 0;
  const end = range?.[2] ? Number(range[2]) + 1 : body.length;
  const bytes = body.subarray(start, Math.min(end, body.length));
  const status = range ? `206 Partial Content\r\nContent-Range: bytes ${start}-${start + bytes.length - 1}/${body.length}` : '200 OK';
  return { headers: `HTTP/1.1 ${status}\r\nContent-Length: ${bytes.length}\r\nAccept-Ranges: bytes\r\nETag: "v1"\r\n`, bytes };
}

describe('answers the client refuses by rule are a permanent error for their source', () => {
  it('gives up at once on headers of 200 KB, with a plain message (before: 7 requests in 25 s, no end)', async () => {
    const server = await rawServer((_n, _head, socket) => {
      socket.end(
        `HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Disposition: attachment; filename="${'.'.repeat(200_000)}"\r\n\r\n0123456789`,
      );
    });
    const result = await stitch(['get', `http://127.0.0.1:${server.port}/f.bin`, '-o', 'f.bin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("stitch: failed: the server's answer breaks HTTP/1.1: the response headers are larger than");
    expect(result.stderr).toContain('add another source of the file with -m URL to go on');
    expect(server.requests).toHaveLength(1);
  });

  it('gives up at once on a malformed status line', async () => {
    const server = await rawServer((_n, _head, socket) => socket.end('HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nhi'));
    const result = await stitch(['get', `http://127.0.0.1:${server.port}/f.bin`, '-o', 'f.bin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/failed: the server's answer breaks HTTP\/1\.1: "HTTP\/1\.1 2OO OK" is not an HTTP\/1\.x status line/);
    expect(server.requests).toHaveLength(1);
  });

  it('keeps the bytes stored before the server started to answer with oversized headers', async () => {
    const body = contentBytes(41, 0, 4 * MB);
    const server = await rawServer((n, head, socket) => {
      if (n > 1) {
        socket.end(`HTTP/1.1 206 Partial Content\r\nX-Pad: ${'x'.repeat(100_000)}\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      // The first answer is honest but breaks after 300 kB.
      const { headers, bytes } = partial(head, body);
      socket.write(`${headers}\r\n`);
      socket.write(bytes.subarray(0, 300_000), () => socket.destroy());
    });
    const result = await stitch(['get', `http://127.0.0.1:${server.port}/f.bin`, '-o', 'f.bin', '--connections', '1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/stitch: the 300 kB received are kept; add another source/);
    expect((await readdir(dir)).sort()).toEqual(['f.bin.stitch-part', 'f.bin.stitch-state']);
    expect(server.requests.length).toBeLessThanOrEqual(3);
  });
});

describe('content codings', () => {
  it('asks for files without any coding', async () => {
    const m = await mirror({ size: 200_000, seed: 42 });
    const result = await stitch(['get', m.url, '-o', 'f.bin']);
    expect(result.code, result.stderr).toBe(0);
    expect(m.stats.requests.length).toBeGreaterThan(0);
    const server = await rawServer((_n, _head, socket) => socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n'));
    await stitch(['get', `http://127.0.0.1:${server.port}/f.bin`, '-o', 'g.bin']);
    expect(server.requests[0]).toMatch(/\r\naccept-encoding: identity\r\n/i);
  });

  it('refuses 10,000 listed codings at once (before: killed after 30 s at 261 MB)', async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'Content-Encoding': new Array(10_000).fill('gzip').join(','), 'Content-Length': 20 });
      res.end(gzipSync('hello'));
    });
    const result = await stitch(['get', `${server.origin}/f.bin`, '-o', 'f.bin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('failed: the server applied 10000 content codings (gzip, gzip, gzip, gzip, …); at most 2 are undone');
    expect(server.requests).toHaveLength(1);
    expect(await readdir(dir)).not.toContain('f.bin');
  });

  it('refuses 1,500 nested gzip layers (before: 16–24 s)', async () => {
    let nested: Uint8Array = new TextEncoder().encode('hello');
    for (let i = 0; i < 1500; i++) nested = gzipSync(nested);
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'Content-Encoding': new Array(1500).fill('gzip').join(', '), 'Content-Length': nested.length });
      res.end(nested);
    });
    const result = await stitch(['get', `${server.origin}/f.bin`, '-o', 'f.bin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the server applied 1500 content codings');
  });

  it('cuts a body of two gzip layers that grows past 1,100 times its coded size', async () => {
    const bomb = gzipSync(gzipSync(new Uint8Array(256 * 1024 * 1024)));
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'Content-Encoding': 'gzip, gzip', 'Content-Length': bomb.length });
      res.end(bomb);
    });
    const result = await stitch(['get', `${server.origin}/f.bin`, '-o', 'f.bin']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/failed: the server's compressed body grew \d+ times when decoded \(at most 1100\)/);
    expect(await readdir(dir)).not.toContain('f.bin');
  });

  it('refuses a Metalink file sent with three codings', async () => {
    const doc = gzipSync(gzipSync(gzipSync(metalinkXml([{ name: 'a.bin', urls: ['http://127.0.0.1:9/a.bin'] }]))));
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/metalink4+xml', 'Content-Encoding': 'gzip, gzip, gzip' });
      res.end(doc);
    });
    const result = await stitch(['get', `${server.origin}/f.meta4`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('stitch: the server applied 3 content codings (gzip, gzip, gzip); at most 2 are undone');
  });
});

describe('a remote Metalink file', () => {
  const size = 300_000;

  it('never leads into a private address: its own URL is the primary (before: the metadata service was fetched and saved)', async () => {
    const metadata = await mirror({ size: 1000, seed: 1, path: '/latest/meta-data/creds' });
    const file = await mirror({ size, seed: 43, path: '/file.bin' });
    const doc = metalinkXml([{ name: 'creds.json', urls: [metadata.url, `http://files.public.test:${file.port}/file.bin`] }]);
    const server = await hostile((_req, res) => res.end(doc));
    const result = await stitch(['get', `http://meta.public.test:${new URL(server.origin).port}/f.meta4`, '-o', 'creds.json'], {
      publicNames: true,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `stitch: ignored a URL of creds.json: ${metadata.url} is on a local or private network address, and the download is not`,
    );
    expect(metadata.stats.requests).toHaveLength(0);
    expect(await sha256(join(dir, 'creds.json'))).toBe(await contentSha256(43, size));
  });

  it('naming only private addresses saves nothing and says why', async () => {
    const metadata = await mirror({ size: 1000, seed: 1, path: '/latest/meta-data/creds' });
    const server = await hostile((_req, res) => res.end(metalinkXml([{ name: 'creds.json', urls: [metadata.url] }])));
    const result = await stitch(['get', `http://meta.public.test:${new URL(server.origin).port}/f.meta4`], { publicNames: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`gives no usable http(s) URL for creds.json`);
    expect(metadata.stats.requests).toHaveLength(0);
    expect(await readdir(dir)).toEqual([]);
  });

  it('is not followed through a redirect into a private address', async () => {
    const local = await hostile((_req, res) => res.end(metalinkXml([{ name: 'a.bin', urls: ['http://127.0.0.1:9/a.bin'] }])));
    const server = await hostile((_req, res) => res.writeHead(302, { Location: `${local.origin}/f.meta4` }).end());
    const result = await stitch(['get', `http://meta.public.test:${new URL(server.origin).port}/f.meta4`], { publicNames: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`redirected to ${local.origin}/f.meta4 is on a local or private network address`);
    expect(local.requests).toHaveLength(0);
  });

  it('served from the local network may name local sources', async () => {
    const file = await mirror({ size, seed: 44, path: '/file.bin' });
    const server = await hostile((_req, res) => res.end(metalinkXml([{ name: 'file.bin', urls: [file.url] }])));
    const result = await stitch(['get', `${server.origin}/f.meta4`, '-o', 'file.bin']);
    expect(result.code, result.stderr).toBe(0);
    expect(await sha256(join(dir, 'file.bin'))).toBe(await contentSha256(44, size));
  });
});

describe('plain-http sources of an https download', () => {
  const pem = (name: string) => readFile(fileURLToPath(new URL(`../support/tls/loopback.${name}.pem`, import.meta.url)), 'utf8');
  const size = 3 * MB;
  let secure: Mirror;
  let plain: Mirror;

  beforeEach(async () => {
    process.env.NODE_EXTRA_CA_CERTS = fileURLToPath(new URL('../support/tls/loopback.cert.pem', import.meta.url));
    secure = await mirror({ size, seed: 45, rate: 4 * MB, tls: { key: await pem('key'), cert: await pem('cert') } });
    plain = await mirror({ size, seed: 45 });
  });
  afterEach(() => {
    delete process.env.NODE_EXTRA_CA_CERTS;
  });

  it('are not used without a digest, and the user is told why', async () => {
    const result = await stitch(['get', secure.url, '-m', plain.url, '-o', 'f.bin']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`mirror ${plain.url} is not used: it is plain http and the download is https`);
    expect(plain.stats.requests).toHaveLength(0);
    expect(await sha256(join(dir, 'f.bin'))).toBe(await contentSha256(45, size));
  });

  it('join it when the digest the user gave covers every byte', async () => {
    const digest = await contentSha256(45, size);
    const result = await stitch(['get', secure.url, '-m', plain.url, '-o', 'f.bin', '--checksum', `sha-256=${digest}`]);
    expect(result.code, result.stderr).toBe(0);
    expect(plain.stats.requests.length).toBeGreaterThan(0);
    expect(await sha256(join(dir, 'f.bin'))).toBe(digest);
  });

  it('of an https Metalink file are used only when its hashes cover the file', async () => {
    const doc = (sha256?: string) => metalinkXml([{ name: 'f.bin', size, sha256, urls: [secure.url, plain.url] }]);
    const tls = { key: await pem('key'), cert: await pem('cert') };
    const bareBody = new TextEncoder().encode(doc());
    const bare = await mirror({ size: bareBody.length, body: bareBody, path: '/bare.meta4', tls });
    const result = await stitch(['get', bare.url, '-o', 'f.bin']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`ignored a URL of f.bin: ${plain.url} is plain http and the download is https`);
    expect(plain.stats.requests).toHaveLength(0);

    const body = new TextEncoder().encode(doc(await contentSha256(45, size)));
    const hashed = await mirror({ size: body.length, body, path: '/hashed.meta4', tls });
    await rm(join(dir, 'f.bin'));
    const again = await stitch(['get', hashed.url, '-o', 'f.bin']);
    expect(again.code, again.stderr).toBe(0);
    expect(plain.stats.requests.length).toBeGreaterThan(0);
    expect(await sha256(join(dir, 'f.bin'))).toBe(await contentSha256(45, size));
  });
});
