import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTENT_CHUNK, contentBytes, contentSha256 } from '../support/content';
import { defaultEtag, startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';

const open: Mirror[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});

async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  open.push(m);
  return m;
}

async function get(url: string, headers: Record<string, string> = {}, init: RequestInit = {}) {
  const res = await fetch(url, { ...init, headers });
  const body = new Uint8Array(await res.arrayBuffer());
  return { res, body };
}

/** Byte equality without a giant diff on failure. */
function same(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Reads the body until it has `want` bytes; then whether one more read settles within `ms`. */
async function readThenWait(res: Response, want: number, ms: number) {
  const reader = res.body!.getReader();
  let got = 0;
  while (got < want) {
    const { value, done } = await reader.read();
    if (done) break;
    got += value.length;
  }
  const next = reader.read().then(
    () => 'settled',
    () => 'settled',
  );
  const outcome = await Promise.race([next, new Promise((r) => setTimeout(() => r('pending'), ms))]);
  return { got, outcome, reader };
}

describe('content', () => {
  it('is deterministic per (seed, index), across chunk boundaries and alignments', () => {
    const whole = contentBytes(7, 0, 3 * CONTENT_CHUNK + 5);
    expect(same(contentBytes(7, 0, whole.length), whole)).toBe(true);
    for (const [a, b] of [
      [1, 2],
      [3, CONTENT_CHUNK + 17],
      [CONTENT_CHUNK - 1, 2 * CONTENT_CHUNK + 1],
      [CONTENT_CHUNK, 2 * CONTENT_CHUNK],
      [5, 5],
    ] as const) {
      expect(same(contentBytes(7, a, b), whole.subarray(a, b))).toBe(true);
    }
    expect(same(contentBytes(8, 0, 64), whole.subarray(0, 64))).toBe(false);
    expect(same(contentBytes(7, CONTENT_CHUNK, CONTENT_CHUNK + 64), whole.subarray(0, 64))).toBe(false);
  });

  it('hashes like the bytes it generates', async () => {
    const size = 2 * CONTENT_CHUNK + 333;
    expect(await contentSha256(3, size)).toBe(sha256(contentBytes(3, 0, size)));
    expect(await contentSha256(3, 0)).toBe(sha256(new Uint8Array(0)));
  });
});

describe('mirror server', () => {
  const size = 3 * CONTENT_CHUNK + 1234;

  it('serves the whole file with validators and headers', async () => {
    const m = await mirror({ size, seed: 5, filename: 'résumé (1).bin', extraHeaders: { 'X-Test': 'yes' } });
    expect(m.url).toBe(`http://127.0.0.1:${m.port}/file.bin`);
    const { res, body } = await get(m.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(size));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('etag')).toBe(defaultEtag(5, size));
    expect(res.headers.get('last-modified')).toMatch(/GMT$/);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''r%C3%A9sum%C3%A9%20%281%29.bin");
    expect(res.headers.get('x-test')).toBe('yes');
    expect(same(body, contentBytes(5, 0, size))).toBe(true);
    expect(sha256(body)).toBe(await contentSha256(5, size));
    expect(m.stats.requests[0]).toMatchObject({ method: 'GET', status: 200, bytesSent: size, aborted: false });
    expect(m.stats.bytesSent).toBe(size);
  });

  it('answers HEAD, 404 on other paths, and omits null validators', async () => {
    const m = await mirror({ size, path: '/x/y.iso', etag: null, lastModified: null });
    const head = await get(m.url, {}, { method: 'HEAD' });
    expect(head.res.status).toBe(200);
    expect(head.res.headers.get('content-length')).toBe(String(size));
    expect(head.body.length).toBe(0);
    expect(head.res.headers.get('etag')).toBeNull();
    expect(head.res.headers.get('last-modified')).toBeNull();
    expect((await get(m.origin + '/file.bin')).res.status).toBe(404);
    expect(m.stats.bytesSent).toBe(0);
  });

  it('requireReferer: 403 without the right Referer; the log records each Referer', async () => {
    const exact = await mirror({ size, seed: 3, requireReferer: 'http://site.test/page' });
    expect((await get(exact.url)).res.status).toBe(403);
    expect((await get(exact.url, { Referer: 'http://other.test/page' })).res.status).toBe(403);
    const ok = await get(exact.url, { Referer: 'http://site.test/page', Range: 'bytes=0-9' });
    expect(ok.res.status).toBe(206);
    expect(same(ok.body, contentBytes(3, 0, 10))).toBe(true);
    expect(exact.stats.requests.map((r) => [r.status, r.referer])).toEqual([
      [403, undefined],
      [403, 'http://other.test/page'],
      [206, 'http://site.test/page'],
    ]);
    expect(exact.stats.bytesSent).toBe(10);

    const pattern = await mirror({ size, requireReferer: /^http:\/\/site\.test\// });
    expect((await get(pattern.url, { Referer: 'http://site.test/any' })).res.status).toBe(200);
    expect((await get(pattern.url, { Referer: 'http://evil.test/http://site.test/' })).res.status).toBe(403);
    // Without the option the Referer is only recorded.
    const open = await mirror({ size: 10 });
    expect((await get(open.url)).res.status).toBe(200);
  });

  it('serves single ranges and 416 for unsatisfiable ones', async () => {
    const m = await mirror({ size, seed: 2 });
    const all = contentBytes(2, 0, size);
    const cases: Array<[string, number, number]> = [
      ['bytes=100-199', 100, 200],
      ['bytes=70000-', 70000, size],
      ['bytes=-500', size - 500, size],
      ['bytes=-999999999', 0, size],
      ['bytes=10-99999999', 10, size],
    ];
    for (const [range, start, end] of cases) {
      const { res, body } = await get(m.url, { Range: range });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end - 1}/${size}`);
      expect(res.headers.get('content-length')).toBe(String(end - start));
      expect(same(body, all.subarray(start, end)), range).toBe(true);
    }
    const bad = await get(m.url, { Range: `bytes=${size}-` });
    expect(bad.res.status).toBe(416);
    expect(bad.res.headers.get('content-range')).toBe(`bytes */${size}`);
    const multi = await get(m.url, { Range: 'bytes=0-1,5-6' });
    expect(multi.res.status).toBe(200);
    expect(multi.body.length).toBe(size);
  });

  it('serves a given body (a real file) whole and in ranges, until setContent replaces it', async () => {
    const body = contentBytes(5, 0, 3 * CONTENT_CHUNK + 11).map((b) => b ^ 0x5a);
    const m = await mirror({ size: body.length, body, contentType: 'video/webm' });
    const whole = await get(m.url);
    expect(whole.res.headers.get('content-type')).toBe('video/webm');
    expect(same(whole.body, body)).toBe(true);
    const part = await get(m.url, { Range: `bytes=${CONTENT_CHUNK - 3}-${2 * CONTENT_CHUNK + 4}` });
    expect(part.res.status).toBe(206);
    expect(same(part.body, body.subarray(CONTENT_CHUNK - 3, 2 * CONTENT_CHUNK + 5))).toBe(true);
    m.setContent({ seed: 6 });
    expect(same((await get(m.url)).body, contentBytes(6, 0, body.length))).toBe(true);
    await expect(startMirror({ size: 10, body })).rejects.toThrow(/length/);
  });

  it('honours If-Range', async () => {
    const m = await mirror({ size });
    const { res } = await get(m.url, {}, { method: 'HEAD' });
    const etag = res.headers.get('etag')!;
    const lastModified = res.headers.get('last-modified')!;
    expect((await get(m.url, { Range: 'bytes=5-9', 'If-Range': etag })).res.status).toBe(206);
    expect((await get(m.url, { Range: 'bytes=5-9', 'If-Range': lastModified })).res.status).toBe(206);
    const stale = await get(m.url, { Range: 'bytes=5-9', 'If-Range': '"other"' });
    expect(stale.res.status).toBe(200);
    expect(stale.body.length).toBe(size);
    expect((await get(m.url, { Range: 'bytes=5-9', 'If-Range': `W/${etag}` })).res.status).toBe(200);
    expect(m.stats.requests.map((r) => r.ifRange)).toEqual([undefined, etag, lastModified, '"other"', `W/${etag}`]);
  });

  it('limits the rate of one download', async () => {
    const m = await mirror({ size: 2_000_000, rate: 4_000_000 });
    const t0 = performance.now();
    const { body } = await get(m.url);
    const seconds = (performance.now() - t0) / 1000;
    expect(body.length).toBe(2_000_000);
    expect(seconds).toBeGreaterThan(0.4);
    expect(seconds).toBeLessThan(0.6);
  });

  it('shares the server rate between connections; connectionRate is per connection', async () => {
    const shared = await mirror({ size: 1_000_000, rate: 4_000_000 });
    let t0 = performance.now();
    await Promise.all([get(shared.url), get(shared.url)]);
    let seconds = (performance.now() - t0) / 1000;
    expect(shared.stats.connections).toBe(2);
    expect(seconds).toBeGreaterThan(0.4);
    expect(seconds).toBeLessThan(0.6);

    const perConnection = await mirror({ size: 1_000_000, connectionRate: 4_000_000 });
    t0 = performance.now();
    await Promise.all([get(perConnection.url), get(perConnection.url)]);
    seconds = (performance.now() - t0) / 1000;
    // 1 MB each at 4 MB/s, less the 50 ms burst: ~0.2 s.
    expect(seconds).toBeGreaterThan(0.16);
    expect(seconds).toBeLessThan(0.3);
  });

  it('changes the rate at run time', async () => {
    const m = await mirror({ size: 400_000, rate: 100_000 });
    m.setRate(undefined);
    const t0 = performance.now();
    await get(m.url);
    expect(performance.now() - t0).toBeLessThan(200);
  });

  it('delays the headers by latencyMs', async () => {
    const m = await mirror({ size: 10, latencyMs: 150 });
    const t0 = performance.now();
    await fetch(m.url, { method: 'HEAD' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(145);
  });

  it('sustains loopback throughput unthrottled', async () => {
    const total = 128 * 1024 * 1024;
    const m = await mirror({ size: total });
    const t0 = performance.now();
    const received = await new Promise<number>((resolve, reject) => {
      request(m.url, (res) => {
        let n = 0;
        res.on('data', (chunk: Buffer) => (n += chunk.length));
        res.on('end', () => resolve(n));
        res.on('error', reject);
      })
        .on('error', reject)
        .end();
    });
    const mbPerSec = received / 1e6 / ((performance.now() - t0) / 1000);
    expect(received).toBe(total);
    // A smoke check only: client and server share one thread here and other test files share the
    // CPU. Alone on loopback (curl as client) the server does ~700 MB/s.
    expect(mbPerSec).toBeGreaterThan(40);
  });
});

describe('mirror faults', () => {
  const size = 1_000_000;

  it('resetAfterBytes: the body read rejects after exactly N bytes were sent', async () => {
    const m = await mirror({ size, faults: { resetAfterBytes: 100_000 } });
    const res = await fetch(m.url);
    await expect(res.arrayBuffer()).rejects.toThrow();
    expect(m.stats.requests[0]).toMatchObject({ bytesSent: 100_000, aborted: true });
  });

  it('resetAfterMs: the socket dies mid-body', async () => {
    const m = await mirror({ size, rate: 1_000_000, faults: { resetAfterMs: 100 } });
    const res = await fetch(m.url);
    await expect(res.arrayBuffer()).rejects.toThrow();
    const sent = m.stats.requests[0]!.bytesSent;
    expect(sent).toBeGreaterThan(50_000);
    expect(sent).toBeLessThan(300_000);
  });

  it('stallAfterBytes: no more bytes, socket stays open until the client gives up', async () => {
    const m = await mirror({ size, faults: { stallAfterBytes: 1000 } });
    const abort = new AbortController();
    const res = await fetch(m.url, { signal: abort.signal });
    const { got, outcome } = await readThenWait(res, 1000, 300);
    expect(got).toBe(1000);
    expect(outcome).toBe('pending');
    expect(m.stats.requests[0]!.endedAt).toBeUndefined();
    abort.abort();
    await expect.poll(() => m.stats.requests[0]!.aborted).toBe(true);
    expect(m.stats.requests[0]!.bytesSent).toBe(1000);
  });

  it('stallAll: open and new responses go silent for good, sockets stay open', async () => {
    const m = await mirror({ size, rate: 1_000_000 });
    const abort = new AbortController();
    const open = await fetch(m.url, { signal: abort.signal });
    await readThenWait(open, 50_000, 0);
    m.stallAll();
    const sentAtStall = m.stats.bytesSent;
    const late = await fetch(m.url, { signal: abort.signal });
    expect(late.status).toBe(200);
    expect((await readThenWait(late, 0, 300)).outcome).toBe('pending');
    expect(m.stats.bytesSent - sentAtStall).toBeLessThanOrEqual(10_000); // one piece already on its way
    expect(m.stats.requests.map((r) => r.endedAt)).toEqual([undefined, undefined]);
    abort.abort();
  });

  it('truncateAfterBytes: a short body that ends cleanly', async () => {
    const m = await mirror({ size, seed: 4, faults: { truncateAfterBytes: 5000 } });
    const { res, body } = await get(m.url);
    expect(res.headers.get('content-length')).toBeNull();
    expect(same(body, contentBytes(4, 0, 5000))).toBe(true);
    expect(m.stats.requests[0]!.aborted).toBe(false);
  });

  it('lieContentLength: a premature close', async () => {
    const m = await mirror({ size: 1000, faults: { lieContentLength: 100 } });
    const res = await fetch(m.url);
    expect(res.headers.get('content-length')).toBe('1100');
    await expect(res.arrayBuffer()).rejects.toThrow();
  });

  it('ignoreRanges and acceptRangesNone answer 200 with the whole file', async () => {
    const m = await mirror({ size, faults: { ignoreRanges: true } });
    let { res, body } = await get(m.url, { Range: 'bytes=10-19' });
    expect([res.status, res.headers.get('accept-ranges'), body.length]).toEqual([200, 'bytes', size]);
    m.setFaults({ acceptRangesNone: true });
    ({ res, body } = await get(m.url, { Range: 'bytes=10-19' }));
    expect([res.status, res.headers.get('accept-ranges'), body.length]).toEqual([200, 'none', size]);
  });

  it('wrongContentRange shifts the header but not the body', async () => {
    const m = await mirror({ size, faults: { wrongContentRange: 10 } });
    const { res, body } = await get(m.url, { Range: 'bytes=100-199' });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes 110-209/${size}`);
    expect(same(body, contentBytes(1, 100, 200))).toBe(true);
  });

  it('status416 answers every range request with 416', async () => {
    const m = await mirror({ size, faults: { status416: true } });
    const { res } = await get(m.url, { Range: 'bytes=0-9' });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${size}`);
    expect((await get(m.url)).res.status).toBe(200);
  });

  it('errorStatus with Retry-After, limited by faultRequests', async () => {
    const m = await mirror({ size: 100, faults: { errorStatus: { status: 503, retryAfter: '2' }, faultRequests: 2 } });
    for (let i = 0; i < 2; i++) {
      const { res } = await get(m.url);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
    }
    const ok = await get(m.url);
    expect(ok.res.status).toBe(200);
    expect(ok.res.headers.get('retry-after')).toBeNull();
    m.setFaults({ errorStatus: { status: 429 }, faultRequests: 1 });
    expect((await get(m.url)).res.status).toBe(429);
    expect((await get(m.url)).res.status).toBe(200);
  });

  it('changeAfterRequests replaces the file', async () => {
    const m = await mirror({ size: 5000, seed: 3, faults: { changeAfterRequests: 1 } });
    const first = await get(m.url);
    const second = await get(m.url);
    expect(second.res.headers.get('etag')).not.toBe(first.res.headers.get('etag'));
    expect(second.res.headers.get('last-modified')).not.toBe(first.res.headers.get('last-modified'));
    expect(same(first.body, contentBytes(3, 0, 5000))).toBe(true);
    expect(same(second.body, contentBytes(1003, 0, 5000))).toBe(true);
    const stale = await get(m.url, { Range: 'bytes=0-9', 'If-Range': first.res.headers.get('etag')! });
    expect(stale.res.status).toBe(200);
  });

  it('setContent replaces the file too', async () => {
    const m = await mirror({ size: 5000, seed: 3 });
    m.setContent({ seed: 9, size: 4000, etag: '"v2"' });
    const { res, body } = await get(m.url);
    expect(res.headers.get('etag')).toBe('"v2"');
    expect(same(body, contentBytes(9, 0, 4000))).toBe(true);
  });

  it('gzip encodes the selected bytes (fetch decodes them)', async () => {
    const m = await mirror({ size, faults: { gzip: true } });
    const whole = await get(m.url);
    expect(whole.res.headers.get('content-encoding')).toBe('gzip');
    expect(same(whole.body, contentBytes(1, 0, size))).toBe(true);
    const part = await get(m.url, { Range: 'bytes=1000-2999' });
    expect(part.res.status).toBe(206);
    expect(part.res.headers.get('content-range')).toBe(`bytes 1000-2999/${size}`);
    expect(same(part.body, contentBytes(1, 1000, 3000))).toBe(true);
  });

  it('refuse drops the connection; faultRequests limits it to the first requests', async () => {
    const m = await mirror({ size: 100, faults: { refuse: true, faultRequests: 1 } });
    await expect(fetch(m.url)).rejects.toThrow();
    expect((await get(m.url)).res.status).toBe(200);
    expect(m.stats.requests.map((r) => [r.status, r.aborted])).toEqual([
      [0, true],
      [200, false],
    ]);
    m.resetStats();
    expect(m.stats).toMatchObject({ requests: [], bytesSent: 0, connections: 0 });
  });
});

describe('sessions and redirects', () => {
  it('sets its session cookie at /set-cookie, records the Cookie of each request, and redirects when told', async () => {
    const m = await mirror({
      size: 10,
      setCookie: 'session=1; Path=/; SameSite=Strict; HttpOnly',
      redirect: { location: 'http://127.0.0.1:9/elsewhere' },
    });
    const signIn = await get(`${m.origin}/set-cookie`);
    expect(signIn.res.headers.get('set-cookie')).toBe('session=1; Path=/; SameSite=Strict; HttpOnly');
    const moved = await get(m.url, { Cookie: 'session=1' }, { redirect: 'manual' });
    expect(moved.res.status).toBe(302);
    expect(moved.res.headers.get('location')).toBe('http://127.0.0.1:9/elsewhere');
    expect(m.stats.requests.map((r) => [r.path, r.cookie, r.status])).toEqual([
      ['/set-cookie', undefined, 200],
      ['/file.bin', 'session=1', 302],
    ]);
  });
});
