import { describe, expect, it } from 'vitest';
import { englishDrop } from '../../src/engine';
import { contentSha256 } from '../support/content';
import type { runEngine } from '../support/engine-run';
import type { Mirror } from '../support/mirror-server';
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
});
