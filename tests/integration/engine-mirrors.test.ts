import { describe, expect, it } from 'vitest';
import { englishDrop } from '../../src/engine';
import { contentSha256 } from '../support/content';
import type { runEngine } from '../support/engine-run';
import { startMirror, type Mirror } from '../support/mirror-server';
import { MiB, useTestBed } from '../support/test-bed';

const bed = useTestBed();
const start = bed.mirrors;

function download(ms: Mirror[], options: Parameters<typeof runEngine>[1] = {}, onJob?: Parameters<typeof runEngine>[2]) {
  return bed.download(
    ms[0]!.url,
    options,
    onJob,
    ms.slice(1).map((m) => m.url),
  );
}

const sent = (ms: Mirror[]) => ms.reduce((sum, m) => sum + m.stats.bytesSent, 0);

describe('several mirrors at once', () => {
  it('fetches from all mirrors in proportion to their rates and assembles the exact file', async () => {
    const size = 24 * MiB;
    const rates = [1, 2, 4, 8].map((r) => r * MiB);
    const ms = await start(rates.map((rate) => ({ size, seed: 31, rate })));
    const t0 = Date.now();
    const run = await download(ms);
    const seconds = (Date.now() - t0) / 1000;
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(31, size));
    const optimum = size / rates.reduce((a, b) => a + b);
    console.log(
      `4 mirrors 1/2/4/8 MiB/s, ${size / MiB} MiB: ${seconds.toFixed(2)} s, efficiency ${(optimum / seconds).toFixed(2)}, over-fetch ${(sent(ms) / size).toFixed(3)}`,
    );
    // The fastest mirror serves the most, the slowest the least; every mirror helps.
    const shares = ms.map((m) => m.stats.bytesSent);
    expect(shares[3]).toBeGreaterThan(shares[0]!);
    expect(shares.every((b) => b > 0)).toBe(true);
    expect(sent(ms) / size).toBeLessThan(1.25);
    expect(run.result.mirrors.map((m) => m.phase)).toEqual(['active', 'active', 'active', 'active']);
  });

  it('drops a mirror that serves different bytes of the same size, and the file stays exact', async () => {
    const size = 8 * MiB;
    // The bad mirror answers a little later than the primary, so its probe is judged at once (not trusted first).
    const ms = await start([
      { size, seed: 41, rate: 8 * MiB },
      { size, seed: 99, rate: 8 * MiB, latencyMs: 50 },
      { size, seed: 41, rate: 8 * MiB },
    ]);
    const run = await download(ms);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(41, size));
    expect(run.result.mirrors[1]).toMatchObject({ phase: 'dropped' });
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/different bytes.*first difference at byte \d+/);
    // Only the probe, and the first block asked with it (given up unread once the probe failed), went to the bad mirror.
    expect(ms[1]!.stats.requests.length).toBeLessThanOrEqual(2);
    expect(ms[1]!.stats.requests.slice(1).every((r) => r.aborted)).toBe(true);
    expect(run.notices.join('\n')).toMatch(/mirror .* was dropped: it serves different bytes/);
  });

  it("checks a mirror in one round trip: its probe and the answer's headers fit a new connection's first window", async () => {
    const size = 4 * MiB;
    const rttMs = 100;
    const ms = await start([0, 1].map(() => ({ size, seed: 46, rate: 8 * MiB, latencyMs: rttMs, slowStart: true })));
    const run = await download(ms);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(46, size));
    const probe = ms[1]!.stats.requests[0]!;
    expect(probe.range).toMatch(/^bytes=0-\d+$/);
    // One round trip before the headers, and the body in the same round: a second one would take 2 × 100 ms.
    expect(probe.endedAt! - probe.startedAt).toBeLessThan(1.5 * rttMs);
    expect(run.result.mirrors[1]).toMatchObject({ phase: 'active' });
  });

  it("asks each mirror's first block with its probe, before the size is known, and stores it once the probe passed", async () => {
    const size = 8 * MiB;
    const rttMs = 100;
    const ms = await start([0, 1, 2].map(() => ({ size, seed: 47, rate: 8 * MiB, latencyMs: rttMs, slowStart: true })));
    const run = await download(ms);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(47, size));
    const guesses = ms.slice(1).map((m) => {
      const [probe, guess] = m.stats.requests;
      expect(probe!.range).toMatch(/^bytes=0-/);
      // Asked at the probe's moment, not a round trip later once the probe answered.
      expect(guess!.startedAt - probe!.startedAt).toBeLessThan(rttMs / 2);
      expect(guess!.aborted).toBe(false);
      return guess!.range;
    });
    // Each past the primary's first MiB and the other's guess.
    expect(guesses.sort()).toEqual(['bytes=1048576-1572863', 'bytes=1572864-2097151']);
    expect(run.result.mirrors.map((m) => m.phase)).toEqual(['active', 'active', 'active']);
  });

  it('gives up a guessed first block past the end of a small file, holding nothing against its mirror', async () => {
    const size = 700 * 1024;
    const ms = await start([0, 1].map(() => ({ size, seed: 48, rate: 2 * MiB, latencyMs: 20 })));
    const run = await download(ms);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(48, size));
    const [, guess] = ms[1]!.stats.requests;
    expect(guess!.status).toBe(416);
    expect(run.result.mirrors[1]).toMatchObject({ phase: 'active', failures: 0 });
  });

  it('drops a mirror whose copy changed between its probe and the first block asked with it', async () => {
    const size = 8 * MiB;
    const ms = await start([
      { size, seed: 49, rate: 8 * MiB, latencyMs: 20 },
      { size, seed: 49, rate: 8 * MiB, latencyMs: 20, faults: { changeAfterRequests: 1 } },
    ]);
    const run = await download(ms);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(49, size));
    const [first] = ms[1]!.stats.requests;
    // The probe saw the old copy and passed, so the guess (the new copy) was refused; or the other way round.
    const probeFirst = first!.range === `bytes=0-${12 * 1024 - 1}`;
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(probeFirst ? /its copy changed/ : /different bytes/);
  });

  it('drops a mirror of another size, one that ignores ranges, and one that lies in Content-Range', async () => {
    const size = 6 * MiB;
    const ms = await start([
      { size, seed: 42, rate: 8 * MiB },
      { size: size + 1, seed: 42 },
      { size, seed: 42, faults: { ignoreRanges: true } },
      { size, seed: 42, rate: 4 * MiB },
    ]);
    let liar = false;
    const run = await download(ms, {}, (job) =>
      job.on('progress', () => {
        // Once the last mirror is checked, it starts lying about the ranges it sends.
        if (!liar && job.snapshot().mirrors[3]?.phase === 'active') {
          liar = true;
          ms[3]!.setFaults({ wrongContentRange: -4096 });
        }
      }),
    );
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(42, size));
    const dropped = run.result.mirrors.map((m) => m.dropped && englishDrop(m.dropped));
    expect(dropped[0]).toBeUndefined();
    expect(dropped[1]).toMatch(/serves a file of 6291457 bytes, not 6291456/);
    expect(dropped[2]).toMatch(/ignores range requests|ignored the range request/);
    expect(dropped[3]).toMatch(/sent bytes \d+–\d+ when asked for bytes \d+–\d+/);
  });

  it('finishes on the others when a mirror stalls for good, re-requesting its blocks', async () => {
    const size = 16 * MiB;
    const ms = await start([0, 1, 2].map(() => ({ size, seed: 43, rate: 4 * MiB })));
    let stalled = false;
    const t0 = Date.now();
    const run = await download(ms, { stallTimeoutMs: 5000 }, (job) =>
      job.on('progress', (p) => {
        if (!stalled && p.received > size / 2) {
          stalled = true;
          ms[2]!.setFaults({ stallAfterBytes: 0 });
          ms[2]!.dropConnections();
        }
      }),
    );
    const seconds = (Date.now() - t0) / 1000;
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(43, size));
    // Half the file at 12 MiB/s, the other half at 8 MiB/s: 1.67 s at best.
    console.log(`stalled mirror: ${seconds.toFixed(2)} s (optimum ${(size / 2 / (12 * MiB) + size / 2 / (8 * MiB)).toFixed(2)} s)`);
    expect(seconds).toBeLessThan(5);
  });

  it('survives a dead mirror, backing it off, and never counts its failures against the job', async () => {
    const size = 4 * MiB;
    const [good] = await start([{ size, seed: 44, rate: 8 * MiB }]);
    const dead = await startMirror({ size });
    const deadUrl = dead.url;
    await dead.close();
    const run = await bed.download(good!.url, { maxAttemptsWithoutProgress: 3 }, undefined, [deadUrl]);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(44, size));
    expect(run.result.mirrors[1]).toMatchObject({ phase: 'dropped' });
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/gave up after 3 attempts/);
  });

  it('duplicates the last slow blocks on a fast mirror (end game) with bounded over-fetch', async () => {
    const size = 8 * MiB;
    const ms = await start([
      { size, seed: 45, rate: 16 * MiB },
      { size, seed: 45, rate: 256 * 1024 },
    ]);
    const t0 = Date.now();
    const run = await download(ms);
    const seconds = (Date.now() - t0) / 1000;
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(45, size));
    console.log(`fast+very slow: ${seconds.toFixed(2)} s, over-fetch ${(sent(ms) / size).toFixed(3)}`);
    // The slow mirror must not hold the download back by its last block.
    expect(seconds).toBeLessThan((size / (16 * MiB)) * 2 + 1);
    expect(sent(ms) / size).toBeLessThan(1.2);
  });

  it('drops a mirror whose copy changes mid-download (its If-Range no longer matches)', async () => {
    const size = 8 * MiB;
    const ms = await start([
      { size, seed: 46, rate: 4 * MiB },
      { size, seed: 46, rate: 4 * MiB },
    ]);
    let changed = false;
    const run = await download(ms, {}, (job) =>
      job.on('progress', (p) => {
        if (!changed && p.received > 2 * MiB && job.snapshot().mirrors[1]?.phase === 'active') {
          changed = true;
          ms[1]!.setContent({ seed: 47 });
        }
      }),
    );
    expect(changed).toBe(true);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(46, size));
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/its copy changed/);
    // The mirror's later requests carried its own ETag in If-Range and got the new file whole.
    expect(ms[1]!.stats.requests.some((r) => r.status === 200)).toBe(true);
  });

  it('re-requests a block past its deadline on another mirror, with at most two copies', async () => {
    const size = 12 * MiB;
    const ms = await start([
      { size, seed: 48, rate: 6 * MiB },
      { size, seed: 48, rate: 6 * MiB },
    ]);
    let slowed = false;
    const t0 = Date.now();
    const run = await download(ms, {}, (job) =>
      job.on('progress', (p) => {
        if (!slowed && p.received > 3 * MiB) {
          // The second mirror nearly stops: its blocks in flight miss their deadlines.
          slowed = true;
          ms[1]!.setRate(64 * 1024);
        }
      }),
    );
    const seconds = (Date.now() - t0) / 1000;
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(48, size));
    // Some range asked of the slow mirror was asked of the fast one too (a hedge).
    const starts = (m: Mirror) => m.stats.requests.map((r) => Number(/bytes=(\d+)-/.exec(r.range ?? '')?.[1]));
    const slowAsked = ms[1]!.stats.requests.map((r) => /bytes=(\d+)-(\d+)/.exec(r.range ?? '')).filter((x) => x !== null);
    const hedged = starts(ms[0]!).filter((s) => slowAsked.some((r) => s > Number(r[1]) && s <= Number(r[2])));
    expect(hedged.length).toBeGreaterThan(0);
    // Without hedging the slow mirror's last blocks would take tens of seconds.
    expect(seconds).toBeLessThan(6);
    console.log(`slowed mirror: ${seconds.toFixed(2)} s, ${hedged.length} hedged request(s), over-fetch ${(sent(ms) / size).toFixed(3)}`);
  });

  it('backs off a mirror answering 503 with Retry-After, and uses it again when it recovers', async () => {
    const size = 12 * MiB;
    const ms = await start([
      { size, seed: 49, rate: 3 * MiB },
      { size, seed: 49, rate: 3 * MiB, faults: { errorStatus: { status: 503, retryAfter: '1' }, faultRequests: 3 } },
    ]);
    const run = await download(ms);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(49, size));
    // First its probe and the first block asked with it, both 503; then nothing for a second, each time.
    const [probe, guess, second, third] = ms[1]!.stats.requests;
    expect([probe!.status, guess!.status, second!.status]).toEqual([503, 503, 503]);
    expect(guess!.startedAt - probe!.startedAt).toBeLessThan(100);
    expect(second!.startedAt - guess!.startedAt).toBeGreaterThanOrEqual(950);
    expect(third!.startedAt - second!.startedAt).toBeGreaterThanOrEqual(950);
    expect(ms[1]!.stats.bytesSent).toBeGreaterThan(MiB);
    expect(run.result.mirrors[1]!.phase).toBe('active');
  });

  it('with many mirrors, uses the first few in HRW order and widens past a dead one', async () => {
    const size = 4 * MiB;
    const ms = await start(Array.from({ length: 8 }, () => ({ size, seed: 50, rate: 2 * MiB })));
    const { hrwOrder } = await import('../../src/engine/sources/hrw');
    const order = hrwOrder(ms.slice(1), (m) => m.url, ms[0]!.url);
    // The first mirror in HRW order is dead: the next two in order must take its place.
    order[0]!.setFaults({ refuse: true });
    const run = await download(ms, { maxMirrors: 3, maxAttemptsWithoutProgress: 2 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(50, size));
    const used = ms.slice(1).filter((m) => m.stats.bytesSent > 0);
    expect(new Set(used)).toEqual(new Set([order[1], order[2]]));
    for (const unused of order.slice(3)) expect(unused.stats.requests).toHaveLength(0);
  });
});

describe('a far primary and near mirrors', () => {
  it('starts the near mirrors before the far primary answers, checking them when it does', async () => {
    const size = 12 * MiB;
    const ms = await start([
      { size, seed: 90, rate: 4 * MiB, latencyMs: 400 },
      { size, seed: 90, rate: 4 * MiB },
      { size, seed: 90, rate: 4 * MiB },
    ]);
    const run = await download(ms, { stallTimeoutMs: 3000 });
    expect(run.result.error).toBeUndefined();
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(90, size));
    const primaryAnswered = ms[0]!.stats.requests[0]!.startedAt + 400;
    // Each near mirror's first block was asked for while the primary was still silent.
    for (const near of ms.slice(1)) expect(near.stats.requests[1]!.startedAt).toBeLessThan(primaryAnswered);
    expect(run.result.mirrors.map((m) => m.phase)).toEqual(['active', 'active', 'active']);
  });

  it('discards what a near mirror stored on trust when its bytes turn out to differ', async () => {
    const size = 8 * MiB;
    const ms = await start([
      { size, seed: 91, rate: 4 * MiB, latencyMs: 400 },
      { size, seed: 92, rate: 8 * MiB },
      { size, seed: 91, rate: 4 * MiB },
    ]);
    const run = await download(ms, { stallTimeoutMs: 3000 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(91, size));
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/different bytes/);
    // It did work on trust before the check: that work was thrown away, not used.
    expect(ms[1]!.stats.bytesSent).toBeGreaterThan(256 * 1024);
  });

  it('restarts on the primary when the mirrors that answered first serve a file of another size', async () => {
    const size = 4 * MiB;
    const ms = await start([
      { size, seed: 93, rate: 8 * MiB, latencyMs: 300 },
      { size: size + 10, seed: 93, rate: 8 * MiB },
    ]);
    const run = await download(ms, { stallTimeoutMs: 3000 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(93, size));
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/serves a file of 4194314 bytes/);
  });
});
