import { describe, expect, it } from 'vitest';
import { isRetrying, type DownloadJob } from '../../src/engine';
import { contentSha256 } from '../support/content';
import { defaultEtag, startMirror, type Mirror } from '../support/mirror-server';
import { MiB, useTestBed } from '../support/test-bed';

const { mirror, download } = useTestBed();

/** A job hook that cuts every connection of `m` once, when `bytes` were received. */
function cutOnceAfter(m: Mirror, bytes: number) {
  let cut = false;
  return (job: DownloadJob) =>
    job.on('progress', (p) => {
      if (!cut && p.received > bytes) {
        cut = true;
        m.dropConnections();
      }
    });
}

/** Body bytes the server sent beyond the file size: what the client fetched twice (or lost). */
function refetched(m: Mirror, size: number): number {
  return m.stats.bytesSent - size;
}

describe('one source, no faults', () => {
  it('downloads the exact file in exact, non-overlapping ranges and learns its name and validators', async () => {
    const size = 5 * MiB + 123;
    const m = await mirror({ size, seed: 7, filename: 'Report €.bin', contentType: 'application/x-test' });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(7, size));
    // The first block tells the size; the others tile the rest with no byte fetched twice.
    expect(m.stats.requests[0]!.range).toBe('bytes=0-1048575');
    expect(m.stats.requests.every((r) => r.status === 206 && /^bytes=\d+-\d+$/.test(r.range ?? ''))).toBe(true);
    expect(refetched(m, size)).toBe(0);
    expect(run.result.filename).toBe('Report €.bin');
    expect(run.result.contentType).toBe('application/x-test');
    expect(run.job.state.file?.etag).toMatch(/^"/);
  });

  it('downloads an empty file', async () => {
    const m = await mirror({ size: 0 });
    const run = await download(m.url);
    expect(run.result).toMatchObject({ status: 'complete', size: 0 });
  });

  it('names the file after the URL when there is no Content-Disposition', async () => {
    const m = await mirror({ size: 1000, path: '/dir/some%20name.iso' });
    const run = await download(m.url);
    expect(run.result.filename).toBe('some name.iso');
  });
});

describe('read errors mid-body resume with exactly the missing bytes', () => {
  it('survives a reset after every 300 kB, re-fetching little', async () => {
    const size = 6 * MiB;
    const m = await mirror({ size, seed: 2, faults: { resetAfterBytes: 300_000 } });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(2, size));
    const resumes = m.stats.requests.slice(1);
    expect(resumes.length).toBeGreaterThanOrEqual(8);
    for (const r of resumes) {
      expect(r.range).toMatch(/^bytes=\d+-\d+$/);
      expect(r.ifRange).toBe(run.job.state.file?.etag);
    }
    expect(m.stats.requests.filter((r) => r.aborted).length).toBeGreaterThanOrEqual(8);
    // Bytes sent but lost in socket buffers when the connection was reset are all that repeats.
    expect(refetched(m, size)).toBeLessThan(resumes.length * 256 * 1024);
  });

  it('survives resets every 250 ms on a throttled server', async () => {
    const size = 3 * MiB;
    const m = await mirror({ size, seed: 3, rate: 4 * MiB, faults: { resetAfterMs: 250 } });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(3, size));
    expect(m.stats.requests.length).toBeGreaterThan(2);
  });

  it('resumes a body that ends cleanly but short', async () => {
    const size = 3 * MiB;
    const cut = 256 * 1024;
    const m = await mirror({ size, seed: 4, faults: { truncateAfterBytes: cut, faultRequests: 3 } });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(4, size));
    // Each short body (asked for more than it got: a block of exactly `cut` bytes is whole) is continued from
    // exactly the byte where it stopped.
    const asked = (range: string | undefined) => {
      const [, from, to] = /bytes=(\d+)-(\d*)/.exec(range ?? '') ?? [];
      return from === undefined ? size : (to ? Number(to) + 1 : size) - Number(from);
    };
    const short = m.stats.requests.filter((r) => r.bytesSent === cut && asked(r.range) > cut);
    expect(short.length).toBeGreaterThanOrEqual(1);
    for (const r of short) {
      const start = Number(/bytes=(\d+)-/.exec(r.range!)![1]);
      expect(m.stats.requests.some((q) => q.range?.startsWith(`bytes=${start + cut}-`))).toBe(true);
    }
    expect(refetched(m, size)).toBe(0);
  });

  it('resumes when the server announces more bytes than it sends', async () => {
    const size = 2 * MiB;
    const m = await mirror({ size, seed: 5, faults: { lieContentLength: 1000, faultRequests: 1 } });
    const run = await download(m.url);
    // The lie makes the announced range disagree with Content-Length: never spliced.
    expect(['complete', 'failed']).toContain(run.result.status);
    if (run.result.status === 'complete') expect(await run.sha256()).toBe(await contentSha256(5, size));
    else expect(run.result.error?.code).toBe('bad-length');
  });
});

describe('stalls', () => {
  it('abandons a silent connection after the stall timeout and resumes', async () => {
    const size = 2 * MiB;
    const m = await mirror({ size, seed: 6, faults: { stallAfterBytes: 200_000, faultRequests: 2 } });
    const started = Date.now();
    const run = await download(m.url, { stallTimeoutMs: 300 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(6, size));
    expect(m.stats.requests.filter((r) => r.aborted).length).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(refetched(m, size)).toBeLessThan(2 * 256 * 1024);
  });
});

describe('failures before the first byte', () => {
  it('honours Retry-After on 503 and then succeeds', async () => {
    const size = MiB;
    const m = await mirror({ size, seed: 8, faults: { errorStatus: { status: 503, retryAfter: '1' }, faultRequests: 2 } });
    const started = Date.now();
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(8, size));
    expect(m.stats.requests.map((r) => r.status)).toEqual([503, 503, 206]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
  });

  it('says it is retrying while the server answers 503, and stops saying so once bytes arrive', async () => {
    const m = await mirror({ size: MiB, seed: 9, faults: { errorStatus: { status: 503 }, faultRequests: 3 } });
    const seen: { at: number; retrying: boolean; received: number }[] = [];
    const started = Date.now();
    const run = await download(m.url, { retryBaseMs: 300, retryMaxMs: 600, progressIntervalMs: 100 }, (job) =>
      job.on('progress', (p) => seen.push({ at: Date.now() - started, retrying: isRetrying(p.mirrors), received: p.received })),
    );
    expect(run.result.status).toBe('complete');
    const firstRetrying = seen.find((s) => s.retrying);
    expect(firstRetrying?.at).toBeLessThan(2000);
    expect(firstRetrying?.received).toBe(0);
    expect(seen.at(-1)?.retrying).toBe(false);
    expect(run.result.mirrors[0]).toMatchObject({ failures: 0 });
  });

  it('tells of every failed attempt as it happens, with its cause and the attempts allowed', async () => {
    const m = await mirror({ size: MiB, faults: { errorStatus: { status: 503 } } });
    const told: string[] = [];
    const run = await download(m.url, { maxAttemptsWithoutProgress: 4, retryBaseMs: 50, retryMaxMs: 100 }, (job) =>
      job.on('progress', (p) => {
        const [primary] = p.mirrors;
        const line =
          primary?.failures && !primary.dropped ? `${primary.failures} of ${primary.maxFailures}: ${primary.lastFailure?.status}` : '';
        if (line && line !== told.at(-1)) told.push(line);
      }),
    );
    expect(run.result.status).toBe('failed');
    expect(told).toEqual(['1 of 4: 503', '2 of 4: 503', '3 of 4: 503']);
  });

  it('gives up after the retry limit with a clear error', async () => {
    const m = await mirror({ size: MiB, faults: { errorStatus: { status: 502 } } });
    const run = await download(m.url, { maxAttemptsWithoutProgress: 4 });
    expect(run.result.status).toBe('failed');
    expect(run.result.error).toMatchObject({ code: 'http-status', status: 502, attempts: 4 });
    expect(run.result.error?.message).toMatch(/4 attempts.*502/);
    expect(m.stats.requests).toHaveLength(4);
  });

  it('retries connections dropped before any header, then succeeds', async () => {
    const size = MiB;
    const m = await mirror({ size, seed: 9, faults: { refuse: true, faultRequests: 3 } });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(9, size));
  });

  it('fails clearly when nothing listens', async () => {
    const m = await startMirror({ size: 10 });
    const url = m.url;
    await m.close();
    const run = await download(url, { maxAttemptsWithoutProgress: 3 });
    expect(run.result.status).toBe('failed');
    expect(run.result.error?.message).toMatch(/gave up after 3 attempts/);
  });

  it('fails at once on 404 without retrying', async () => {
    const m = await mirror({ size: 10 });
    const run = await download(`${m.origin}/missing.bin`);
    expect(run.result).toMatchObject({ status: 'failed', error: { code: 'http-status' } });
    expect(run.result.error?.message).toContain('404');
    expect(m.stats.requests).toHaveLength(1);
  });
});

describe('servers that cannot resume or change the file: never a spliced file', () => {
  it('restarts a small file from zero when the server ignores ranges', async () => {
    const size = 3 * MiB;
    const m = await mirror({ size, seed: 10, rate: 16 * MiB, faults: { ignoreRanges: true } });
    const run = await download(m.url, {}, cutOnceAfter(m, MiB));
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(10, size));
    expect(run.notices.join('\n')).toMatch(/ignored the range request.*restarted from zero/);
    expect(m.stats.requests.every((r) => r.status === 200)).toBe(true);
  });

  it('stops with a clear error, keeping the bytes, when a large file cannot be resumed', async () => {
    const size = 4 * MiB;
    const m = await mirror({ size, seed: 11, faults: { acceptRangesNone: true, resetAfterBytes: 1_500_000 } });
    const run = await download(m.url, { maxRestartBytes: MiB });
    expect(run.result.status).toBe('failed');
    expect(run.result.error?.code).toBe('no-ranges');
    expect(run.result.error?.message).toMatch(/too large to download again/);
    expect((await run.store.storedRanges('job')).length).toBe(1);
  });

  it('restarts from zero with the new file when it changes on the server', async () => {
    const size = 3 * MiB;
    const m = await mirror({ size, seed: 12, faults: { resetAfterBytes: MiB, faultRequests: 1, changeAfterRequests: 1 } });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    // The second request carried If-Range with the old ETag and got the new file whole.
    expect(m.stats.requests[1]).toMatchObject({ status: 200 });
    expect(m.stats.requests[1]!.ifRange).toBe(defaultEtag(12, size));
    expect(await run.sha256()).toBe(await contentSha256(1012, size));
    expect(run.notices.join('\n')).toMatch(/ETag changed.*restarted from zero/);
  });

  it('restarts when the server answers 416 to a resume', async () => {
    const size = 2 * MiB;
    const m = await mirror({ size, seed: 13, faults: { resetAfterBytes: MiB, faultRequests: 1 } });
    let armed = false;
    const run = await download(m.url, {}, (job) =>
      job.on('progress', () => {
        if (!armed && m.stats.requests.length === 1) {
          armed = true;
          m.setFaults({ status416: true, faultRequests: 1 });
        }
      }),
    );
    expect(run.result.status).toBe('complete');
    expect(m.stats.requests.map((r) => r.status)).toContain(416);
    expect(await run.sha256()).toBe(await contentSha256(13, size));
  });

  it('fails with the exact reason when Content-Range differs from the range asked for', async () => {
    const size = 2 * MiB;
    const m = await mirror({ size, seed: 14, faults: { resetAfterBytes: MiB, faultRequests: 1 } });
    let armed = false;
    const run = await download(m.url, {}, (job) =>
      job.on('progress', () => {
        if (!armed) {
          armed = true;
          m.setFaults({ wrongContentRange: -100 });
        }
      }),
    );
    expect(run.result.status).toBe('failed');
    expect(run.result.error?.code).toBe('bad-range');
    expect(run.result.error?.message).toMatch(/sent bytes (\d+)–\d+ when asked for bytes (\d+)–\d+/);
  });

  it('downloads a gzip-encoded file whole, since compressed ranges cannot be spliced', async () => {
    const size = 2 * MiB;
    const m = await mirror({ size, seed: 15, faults: { gzip: true } });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(15, size));
    expect(m.stats.requests.at(-1)!.range).toBeUndefined();
  });
});

describe('pause, resume, cancel, reopen', () => {
  it('pauses mid-download and resumes where it stopped', async () => {
    const size = 4 * MiB;
    const m = await mirror({ size, seed: 16, rate: 8 * MiB });
    let paused = false;
    const run = await download(m.url, {}, (job) =>
      job.on('progress', (p) => {
        if (!paused && p.received > MiB) {
          paused = true;
          job.pause();
        }
      }),
    );
    expect(run.result.status).toBe('paused');
    const resumed = await run.job.run();
    expect(resumed.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(16, size));
    expect(refetched(m, size)).toBeLessThan(512 * 1024);
  });

  it('cancel deletes the job and its bytes', async () => {
    const m = await mirror({ size: 4 * MiB, rate: 4 * MiB });
    const run = await download(m.url, {}, (job) => job.on('progress', (p) => p.received > 0 && void job.cancel()));
    expect(run.result.status).toBe('cancelled');
    expect(await run.store.loadState('job')).toBeUndefined();
    expect(await run.store.storedRanges('job')).toEqual([]);
  });
});

describe('pause and cancel while a run is only starting', () => {
  it('a pause or cancel right after run() is called stops it before any request', async () => {
    const m = await mirror({ size: 2 * MiB, rate: 2 * MiB });
    const paused = await download(m.url, {}, (job) => void Promise.resolve().then(() => job.pause()));
    expect(paused.result.status).toBe('paused');
    const cancelled = await download(m.url, {}, (job) => void Promise.resolve().then(() => job.cancel()));
    expect(cancelled.result.status).toBe('cancelled');
    expect(await cancelled.store.loadState('job')).toBeUndefined();
    expect(m.stats.requests).toEqual([]);
  });

  it('a run asked for while a cancel is deleting the job does nothing', async () => {
    const m = await mirror({ size: 2 * MiB, rate: 2 * MiB });
    let cancelling: Promise<void> | undefined;
    const run = await download(m.url, {}, (job) => {
      cancelling = job.cancel();
    });
    await cancelling;
    expect(run.result.status).toBe('queued'); // returned at once, nothing fetched
    expect(run.job.state.status).toBe('cancelled');
    expect(await run.store.loadState('job')).toBeUndefined();
    expect(m.stats.requests).toEqual([]);
  });
});

describe('files of unknown size (no Content-Length, no ranges)', () => {
  // truncateAfterBytes beyond the size: a chunked body with no length, never cut.
  const unknownLength = { acceptRangesNone: true, truncateAfterBytes: 1e12 };

  it('downloads the whole stream and learns the size at its end', async () => {
    const size = 3 * MiB + 7;
    const m = await mirror({ size, seed: 17, faults: unknownLength });
    const run = await download(m.url);
    expect(run.result).toMatchObject({ status: 'complete', size });
    expect(await run.sha256()).toBe(await contentSha256(17, size));
  });

  it('restarts a broken stream from zero while what was stored is small, else fails clearly', async () => {
    const size = 3 * MiB;
    const m = await mirror({ size, seed: 18, rate: 16 * MiB, faults: unknownLength });
    const run = await download(m.url, {}, cutOnceAfter(m, MiB));
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(18, size));
    expect(run.notices.join('\n')).toMatch(/cannot resume; restarted from zero/);

    const big = await mirror({ size, seed: 19, rate: 16 * MiB, faults: unknownLength });
    const failed = await download(big.url, { maxRestartBytes: 512 * 1024 }, cutOnceAfter(big, MiB));
    expect(failed.result.status).toBe('failed');
    expect(failed.result.error?.message).toMatch(/after [\d.]+ MB of a file of unknown size the file is too large/);
  });
});
