import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeFetch } from '../../src/cli/node-fetch';
import { RefusedResponse, type HttpRequest, type HttpResponse } from '../../src/engine';
import { contentSha256 } from '../support/content';
import type { MirrorOptions } from '../support/mirror-server';
import { MiB, useTestBed } from '../support/test-bed';

const bed = useTestBed();

/** What a caller of fetch sees of a response: the facts the engine reads and the body's digest. */
async function seen(response: HttpResponse) {
  const hash = createHash('sha256');
  let bytes = 0;
  if (response.body) {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  }
  const headers = ['content-range', 'content-length', 'content-encoding', 'etag', 'last-modified', 'accept-ranges', 'content-disposition'];
  return {
    status: response.status,
    url: response.url,
    headers: Object.fromEntries(headers.map((h) => [h, response.headers.get(h)])),
    bytes,
    sha256: hash.digest('hex'),
  };
}

/** A server answering every request with a redirect to `target`, `hops` times, then to the target itself. */
async function redirector(target: string, hops: number): Promise<string> {
  const server: Server = createServer((req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? 0);
    res.writeHead(n + 1 < hops ? 302 : 307, { Location: n + 1 < hops ? `/hop?n=${n + 1}` : target });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bed.onCleanup(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hop?n=0`;
}

describe('nodeFetch answers like fetch', () => {
  const cases: Array<{ name: string; mirror: Partial<MirrorOptions>; init: HttpRequest }> = [
    { name: 'a whole file', mirror: { filename: 'a b.bin' }, init: {} },
    { name: 'a range, with If-Range', mirror: {}, init: { headers: { Range: 'bytes=1000-299999', 'If-Range': '"never"' } } },
    { name: 'a range', mirror: {}, init: { headers: { Range: 'bytes=70000-' } } },
    { name: 'a gzip-encoded body (decoded)', mirror: { faults: { gzip: true } }, init: {} },
    { name: 'HEAD', mirror: {}, init: { method: 'HEAD' } },
    { name: 'a 416', mirror: {}, init: { headers: { Range: 'bytes=999999999-' } } },
    { name: 'a 503 with Retry-After', mirror: { faults: { errorStatus: { status: 503, retryAfter: '7' } } }, init: {} },
  ];
  for (const { name, mirror, init } of cases) {
    it(name, async () => {
      const m = await bed.mirror({ size: 3 * MiB + 17, seed: 5, ...mirror });
      const mine = await seen(await nodeFetch(m.url, init));
      const theirs = await seen(await fetch(m.url, init));
      expect(mine).toEqual(theirs);
    });
  }

  it('follows redirects and reports the final URL', async () => {
    const m = await bed.mirror({ size: MiB, seed: 6 });
    const start = await redirector(m.url, 3);
    const mine = await seen(await nodeFetch(start));
    expect(mine).toEqual(await seen(await fetch(start)));
    expect(mine.url).toBe(m.url);
    expect(mine.sha256).toBe(await contentSha256(6, MiB));
  });

  it('gives up after 20 redirects', async () => {
    const m = await bed.mirror({ size: 10, seed: 6 });
    await expect(nodeFetch(await redirector(m.url, 25))).rejects.toThrow(TypeError);
  });

  it('rejects with a readable cause when nothing listens', async () => {
    const m = await bed.mirror({ size: 10 });
    const url = m.url;
    await m.close();
    const error = (await nodeFetch(url).catch((e: unknown) => e)) as TypeError;
    expect(error).toBeInstanceOf(TypeError);
    expect(String((error.cause as Error).message)).toMatch(/ECONNREFUSED/);
  });
});

describe('nodeFetch bodies end the way the engine expects', () => {
  it('an abort mid-body errors the reader with the signal reason, and the server sees the request end', async () => {
    const m = await bed.mirror({ size: 64 * MiB, seed: 7, rate: 4 * MiB });
    const controller = new AbortController();
    const reader = (await nodeFetch(m.url, { signal: controller.signal })).body!.getReader();
    await reader.read();
    const reason = Symbol('pause');
    controller.abort(reason);
    await expect(readToEnd(reader)).rejects.toBe(reason);
    await until(() => m.stats.requests[0]?.endedAt !== undefined);
    expect(m.stats.requests[0]!.aborted).toBe(true);
  });

  it('an abort before the response rejects with the signal reason', async () => {
    const m = await bed.mirror({ size: MiB, latencyMs: 5000 });
    const controller = new AbortController();
    const pending = nodeFetch(m.url, { signal: controller.signal });
    const reason = new Error('stalled');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('a connection reset mid-body errors the reader (not a short, clean end)', async () => {
    const m = await bed.mirror({ size: 8 * MiB, seed: 8, faults: { resetAfterBytes: 2 * MiB } });
    const reader = (await nodeFetch(m.url)).body!.getReader();
    await expect(readToEnd(reader)).rejects.toThrow(TypeError);
  });

  it('cancelling the body closes the request', async () => {
    const m = await bed.mirror({ size: 64 * MiB, seed: 9, rate: 4 * MiB });
    const response = await nodeFetch(m.url);
    await response.body!.cancel();
    await until(() => m.stats.requests[0]?.endedAt !== undefined);
    expect(m.stats.requests[0]!.aborted).toBe(true);
  });
});

describe('the engine over nodeFetch', () => {
  it('sends its requests over kept-alive connections, fewer than the requests', async () => {
    const size = 24 * MiB + 5;
    const m = await bed.mirror({ size, seed: 13, rate: 24 * MiB });
    const run = await bed.download(m.url, { fetch: nodeFetch });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(13, size));
    expect(m.stats.connections).toBeLessThan(m.stats.requests.length);
  });

  it('saves the exact file through resets every 300 kB and a gzip-encoded answer', async () => {
    const size = 6 * MiB + 3;
    const resetting = await bed.mirror({ size, seed: 10, faults: { resetAfterBytes: 300_000 } });
    const run = await bed.download(resetting.url, { fetch: nodeFetch });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(10, size));

    const gzipped = await bed.mirror({ size, seed: 11, faults: { gzip: true } });
    const whole = await bed.download(gzipped.url, { fetch: nodeFetch });
    expect(whole.result.status).toBe('complete');
    expect(await whole.sha256()).toBe(await contentSha256(11, size));
  });
});

/**
 * A raw TCP server: `answer` gets each request head (as text) with its connection's number and
 * the request's number on that connection, and writes whatever it likes.
 */
async function rawServer(
  answer: (socket: Socket, connection: number, request: number) => void,
): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = createTcpServer((socket) => {
    const connection = ++connections;
    let requests = 0;
    let head = '';
    socket.on('data', (data) => {
      head += data.toString('latin1');
      while (head.includes('\r\n\r\n')) {
        head = head.slice(head.indexOf('\r\n\r\n') + 4);
        answer(socket, connection, ++requests);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bed.onCleanup(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/f`, connections: () => connections };
}

describe('nodeFetch connections', () => {
  it('reuses a kept-alive connection for the next request', async () => {
    const m = await bed.mirror({ size: MiB, seed: 12 });
    for (let i = 0; i < 3; i++) expect((await seen(await nodeFetch(m.url, { headers: { Range: `bytes=${i * 1000}-` } }))).status).toBe(206);
    expect(m.stats.connections).toBe(1);
  });

  it('sends a request again on a new connection when a kept-alive one closes before answering', async () => {
    const server = await rawServer((socket, _, request) => {
      if (request === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst');
      else socket.destroy();
    });
    expect(await new Response((await nodeFetch(server.url)).body).text()).toBe('first');
    expect(await new Response((await nodeFetch(server.url)).body).text()).toBe('first');
    expect(server.connections()).toBe(2);
  });

  it('refuses a broken answer for good with the reason, and errors a body the connection cut as a network failure', async () => {
    const broken = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello'));
    const error = (await nodeFetch(broken.url).catch((e: unknown) => e)) as RefusedResponse;
    expect(error).toBeInstanceOf(RefusedResponse);
    expect(error.message).toBe(`the server's answer breaks HTTP/1.1: Content-Length "5, 6" is not one number of bytes`);

    const cut = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello'));
    const body = (await nodeFetch(cut.url)).body!.getReader();
    const failure = (await readToEnd(body).catch((e: unknown) => e)) as TypeError;
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure.cause as Error).message).toBe('the connection closed before the end of the body');
  });

  it('refuses an answer with both Content-Length and Transfer-Encoding (the request-smuggling shape)', async () => {
    const both = await rawServer((socket) =>
      socket.end('HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'),
    );
    const error = (await nodeFetch(both.url).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(RefusedResponse);
    expect(error.message).toContain('the response has both Content-Length and Transfer-Encoding');
  });

  it('downloads from a server that sends an empty line after 100 Continue, as aiohttp does', async () => {
    const file = Buffer.from('a file served after an interim answer and a stray empty line');
    const server = await rawServer((socket) => {
      socket.write('HTTP/1.1 100 Continue\r\n\r\n\r\n');
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${file.length}\r\n\r\n`);
      socket.end(file);
    });
    const run = await bed.download(server.url, { fetch: nodeFetch });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(createHash('sha256').update(file).digest('hex'));
  });
});

describe('nodeFetch with localNetwork', () => {
  it("'refuse' sends nothing to a local IP address, with the reason; 'allow' and no policy reach it", async () => {
    const m = await bed.mirror({ size: 1000, seed: 13 });
    const error = (await nodeFetch(m.url, { localNetwork: 'refuse' }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(RefusedResponse);
    expect(error.message).toBe('127.0.0.1 is a local or private network address, and the download is not');
    expect(m.stats.connections).toBe(0);
    expect((await seen(await nodeFetch(m.url, { localNetwork: 'allow' }))).status).toBe(200);
    expect((await seen(await nodeFetch(m.url))).status).toBe(200);
    // IPv6 literals, a local IPv4 address behind NAT64 among them, are refused before any connection is tried.
    for (const [url, address] of [
      ['http://[::1]:9/', '::1'],
      ['http://[64:ff9b::7f00:1]:9/', '64:ff9b::7f00:1'],
    ] as const) {
      const refused = (await nodeFetch(url, { localNetwork: 'refuse' }).catch((e: unknown) => e)) as Error;
      expect(refused).toBeInstanceOf(RefusedResponse);
      expect(refused.message).toBe(`${address} is a local or private network address, and the download is not`);
    }
  });

  it("'refuse' checks the address a name resolves to: localhost, even with a connection to it kept alive from an allowed request", async () => {
    const m = await bed.mirror({ size: 1000, seed: 14 });
    const byName = m.url.replace('127.0.0.1', 'localhost');
    expect((await seen(await nodeFetch(byName, { localNetwork: 'allow' }))).status).toBe(200);
    const connections = m.stats.connections;
    const error = (await nodeFetch(byName, { localNetwork: 'refuse' }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(RefusedResponse);
    // localhost may resolve to ::1 first; either is local.
    expect(error.message).toMatch(
      /^localhost resolved to (127\.0\.0\.1|::1), a local or private network address, and the download is not$/,
    );
    expect(m.stats.connections).toBe(connections);
    expect(m.stats.requests).toHaveLength(1);
  });

  it("'refuse' checks the address over https too, before any handshake", async () => {
    const pem = (name: string) => readFileSync(fileURLToPath(new URL(`../support/tls/loopback.${name}.pem`, import.meta.url)), 'utf8');
    const m = await bed.mirror({ size: 1000, seed: 15, tls: { key: pem('key'), cert: pem('cert') } });
    const error = (await nodeFetch(m.url.replace('127.0.0.1', 'localhost'), { localNetwork: 'refuse' }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(RefusedResponse);
    expect(error.message).toMatch(/^localhost resolved to /);
    expect(m.stats.connections).toBe(0);
  });
});

async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  for (;;) if ((await reader.read()).done) return;
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
