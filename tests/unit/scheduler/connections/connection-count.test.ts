import { describe, expect, it } from 'vitest';
import { maxConnectionsFor } from '../../../../src/engine/scheduler/connections/connection-cap';
import { ConnectionCount } from '../../../../src/engine/scheduler/connections/connection-count';
import { run, type Server, type Trace } from '../../../support/connection-trace';

const MB = 1_000_000;

const limitAt = (trace: Trace, ms: number) => trace.samples.find(([t]) => t >= ms)![1];
const median = (values: number[]) => [...values].sort((x, y) => x - y)[values.length >> 1]!;
const firstTime = (trace: Trace, test: (limit: number) => boolean) => trace.samples.find(([, limit]) => test(limit))?.[0];

describe('ConnectionCount', () => {
  it('grows to the maximum of 16 on a server that caps each connection at 1 MB/s', () => {
    const policy = new ConnectionCount();
    const trace = run(policy, { totalRate: 16 * MB, connectionRate: 1 * MB, rttMs: 20 }, 10_000);
    expect(limitAt(trace, 0)).toBe(2);
    // Doubling while it pays: 2, 4, 8, 16 within about a second and a half.
    expect(firstTime(trace, (l) => l === 16)).toBeLessThan(1_500);
    expect(policy.limit(10_000)).toBe(16);
    expect(trace.mostOpen).toBe(16);
    expect(policy.reason).toEqual({ kind: 'at-max', count: 16 });
  });

  it('judges each step within a few round trips once the connections are warm: 16 within 300 ms at 20 ms', () => {
    // Every 100 ms before the 16 costs 12 MB/s here: the rate window is 60 ms or two round trips and 128 KiB, and
    // the first one starts once slow start is done (not after a fixed 100 ms).
    const policy = new ConnectionCount();
    const trace = run(policy, { totalRate: 16 * MB, connectionRate: 1 * MB, rttMs: 20 }, 2_000);
    expect(firstTime(trace, (l) => l === 4)).toBeLessThanOrEqual(180);
    expect(firstTime(trace, (l) => l === 16)).toBeLessThanOrEqual(300);
  });

  it("does not keep a step whose gain the download's other servers lost (they share the user's line)", () => {
    /** Observes every 25 ms for `ms`: this server at `rate` with the policy's count, the download at `download`. */
    const feed = (policy: ConnectionCount, from: number, ms: number, rate: (n: number) => number, download: (n: number) => number) => {
      for (let now = from; now <= from + ms; now += 25) {
        const n = policy.limit(now);
        policy.observe(now, { totalRate: rate(n), downloadRate: download(n), connections: n, rttMs: 20 });
      }
    };
    // Four servers share a 16 MB/s line; this one's share grows with its count, the download's does not.
    const shared = new ConnectionCount();
    feed(
      shared,
      0,
      3_000,
      (n) => (16 * MB * n) / (n + 6),
      () => 16 * MB,
    );
    expect(shared.limit(3_000)).toBeLessThanOrEqual(3);
    expect(shared.reason).toMatchObject({ gain: { kind: 'shared', download: 0 } });
    // A server that caps each connection at 1 MB/s, its gains lost nowhere else: it grows.
    const own = new ConnectionCount();
    feed(
      own,
      0,
      3_000,
      (n) => n * MB,
      (n) => 12 * MB + n * MB,
    );
    expect(own.limit(3_000)).toBeGreaterThanOrEqual(8);
  });

  /**
   * Over 3 s, the most connections and the last count of one of four servers on a line that carries `download(now)`:
   * its share grows with its count, the download's does not (the others have six connections).
   */
  const onSharedLine = (download: (now: number) => number) => {
    const policy = new ConnectionCount();
    let most = 0;
    for (let now = 0; now <= 3_000; now += 25) {
      const n = policy.limit(now);
      most = Math.max(most, n);
      policy.observe(now, { totalRate: (download(now) * n) / (n + 6), downloadRate: download(now), connections: n, rttMs: 20 });
    }
    return { most, last: policy.limit(3_000) };
  };

  it('takes no rate to judge a step against while the whole download still rises (its servers in slow start)', () => {
    // Four servers share a 16 MB/s line that their connections, in slow start, fill in 150 ms (the download doubling
    // every 50 ms); this one's share grows with its count, the download's does not. Judged on the ramp, 2 → 4 would
    // seem to pay.
    const { most, last } = onSharedLine((now) => Math.min(16 * MB, 2 * MB * 2 ** (now / 50)));
    expect(most).toBeLessThanOrEqual(4);
    expect(last).toBe(2);
  });

  it("judges a step beside other servers against the download's level, not a dip of it", () => {
    // Four servers share a full 16 MB/s line; for 100 ms the download dips to 11 MB/s (a busy client), just when this
    // server's first rate is taken. Judged against the dip, 2 → 4 would seem to pay the download too.
    const { most, last } = onSharedLine((now) => (now > 75 && now <= 175 ? 11 * MB : 16 * MB));
    expect(most).toBeLessThanOrEqual(4);
    expect(last).toBe(2);
  });

  it('keeps a step beside other servers only if a second window agrees: a burst of the shared line fakes one', () => {
    // Four servers share a 16 MB/s line, full; for 150 ms after this server first opens four, the line's buffer
    // empties (a burst of 19 MB/s, most of it to the new connections).
    const policy = new ConnectionCount();
    let burstFrom: number | undefined;
    let most = 0;
    for (let now = 0; now <= 3_000; now += 25) {
      const n = policy.limit(now);
      most = Math.max(most, n);
      if (n === 4) burstFrom ??= now;
      const burst = burstFrom !== undefined && now - burstFrom < 150;
      policy.observe(now, {
        totalRate: burst ? 6.8 * MB : (16 * MB * n) / (n + 6),
        downloadRate: burst ? 19 * MB : 16 * MB,
        connections: n,
        rttMs: 20,
      });
    }
    expect(burstFrom).toBeDefined();
    expect(most).toBe(4);
    expect(policy.limit(3_000)).toBeLessThanOrEqual(3);
  });

  /** The counts over 3 s of a server whose connections each bring 1 MB/s, the whole download at `download(count)`. */
  const limitsWith = (download: (n: number) => number) => {
    const policy = new ConnectionCount();
    const limits: number[] = [];
    for (let now = 0; now <= 3_000; now += 25) {
      const n = policy.limit(now);
      limits.push(n);
      policy.observe(now, { totalRate: n * MB, downloadRate: download(n), connections: n, rttMs: 20 });
    }
    return limits;
  };

  it('quadruples only after a step that raised the whole download almost linearly, not this server alone', () => {
    // Each connection brings 1 MB/s; the other servers lose 0.3 MB/s of it (a line near its limit): it pays, doubling.
    const shared = limitsWith((n) => 12 * MB + 0.7 * n * MB);
    expect(shared).toContain(8);
    expect(shared.at(-1)).toBe(16);
    // Nothing lost elsewhere: from 4 straight to 16.
    const own = limitsWith((n) => 12 * MB + n * MB);
    expect(own).not.toContain(8);
    expect(own.at(-1)).toBe(16);
  });

  it('adds one connection, not as many again, after a step the whole download gained only just enough of', () => {
    // The download gains 55 % of what this server gains: the bar (half) is met, but by so little that other servers
    // sharing a line, or a burst, may have made it; measured through four mirrors sharing a 16 MB/s line.
    const counts = limitsWith((n) => 12 * MB + 0.55 * n * MB).filter((n, i, all) => n !== all[i - 1]);
    expect(counts.slice(0, 5)).toEqual([2, 4, 5, 6, 7]);
  });

  it('stays at the option or per-site maximum', () => {
    const policy = new ConnectionCount({ max: 6 });
    const trace = run(policy, { totalRate: 16 * MB, connectionRate: 1 * MB, rttMs: 20 }, 10_000);
    expect(trace.mostOpen).toBe(6);
    expect(policy.reason).toEqual({ kind: 'at-max', count: 6 });
  });

  it('stays at two or fewer on a server capped at 8 MB/s in all, never opening more than four', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const policy = new ConnectionCount();
      const trace = run(policy, { totalRate: 8 * MB, rttMs: 20 }, 30_000, undefined, seed);
      expect(trace.mostOpen).toBeLessThanOrEqual(4);
      // Past the first second only probes of one more (or one fewer) than two.
      expect(Math.max(...trace.samples.filter(([t]) => t > 1_000).map(([, limit]) => limit))).toBeLessThanOrEqual(3);
      // Over the run, the cap was reached as well as 16 connections would have.
      expect(trace.bytes / 30).toBeGreaterThan(0.95 * 8 * MB);
    }
  });

  it('grows to about what fills a far server whose connections are each limited by their window', () => {
    const policy = new ConnectionCount();
    // 256 KiB per 150 ms round trip: 1.75 MB/s each, so five fill 8 MB/s.
    const trace = run(policy, { totalRate: 8 * MB, windowBytes: 256 * 1024, rttMs: 150 }, 30_000);
    // Steps accepted while their connections warm up overshoot (up to 16); the probes down then give back
    // what does not pay, and it settles at five, probing four and six.
    expect(trace.mostOpen).toBeLessThanOrEqual(16);
    const settled = trace.samples.filter(([t]) => t > 20_000).map(([, limit]) => limit);
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(3);
    expect(Math.max(...settled)).toBeLessThanOrEqual(7);
    expect(median(settled)).toBe(5);
    expect(trace.bytes / 30).toBeGreaterThan(0.9 * 8 * MB);
  });

  it('takes a step that clearly pays before its connections have finished slow start', () => {
    // A far server (150 ms) capping each connection at 1 MB/s: slow start takes five round trips.
    const policy = new ConnectionCount();
    const trace = run(policy, { totalRate: 16 * MB, connectionRate: 1 * MB, rttMs: 150 }, 5_000);
    // Two judged once warm (about a second), four accepted as soon as their gain is clear, not six round trips later.
    expect(firstTime(trace, (l) => l >= 8)).toBeLessThan(2_000);
    expect(firstTime(trace, (l) => l === 16)).toBeLessThan(3_000);
  });

  it('waits only the round trips slow start needs to reach what a connection carries', () => {
    // At 1 MB/s per connection and 50 ms, a new connection carries its share after two round trips, not six.
    const policy = new ConnectionCount();
    const trace = run(policy, { totalRate: 16 * MB, connectionRate: 1 * MB, rttMs: 50 }, 3_000);
    expect(firstTime(trace, (l) => l === 4)).toBeLessThan(450);
  });

  it('measures over twice the longest pause between observations: a busy moment is not a verdict', () => {
    // A server capping each connection at 1 MB/s, as the step from eight connections to sixteen is judged: the
    // caller misses 300 ms of observations (a busy event loop) and sees the bytes of that pause in a burst after it.
    const policy = new ConnectionCount({ initial: 8 });
    const feed = (from: number, to: number, step: number, connections: number, rate: (now: number) => number) => {
      for (let now = from; now < to; now += step) policy.observe(now, { totalRate: rate(now), connections, rttMs: 20 });
    };
    feed(0, 1_000, 50, 8, () => 8 * MB);
    expect(policy.limit(1_000)).toBe(16);
    feed(1_000, 1_100, 50, 16, () => 16 * MB);
    // The pause: one observation 300 ms later, with the bytes of 50 ms; the next carries the rest.
    policy.observe(1_400, { totalRate: (16 * MB) / 6, connections: 16, rttMs: 20 });
    policy.observe(1_450, { totalRate: 16 * MB + (16 * MB * 250) / 50, connections: 16, rttMs: 20 });
    feed(1_500, 3_000, 50, 16, () => 16 * MB);
    expect(policy.limit(3_000)).toBe(16);
    expect(policy.reason).toEqual({ kind: 'at-max', count: 16 });
  });

  it('starts a far server with four times the first count: each step there costs a slow start of long round trips', () => {
    const policy = new ConnectionCount();
    const trace = run(policy, { totalRate: 8 * MB, windowBytes: 256 * 1024, rttMs: 150 }, 3_000);
    expect(limitAt(trace, 100)).toBe(8);
    expect(trace.bytes / 3).toBeGreaterThan(6 * MB);
  });

  it('adds no connections the download would end before they are warm (a far server: their slow start takes seconds)', () => {
    // 300 ms away, 1 MB/s per connection: each added one needs about 1.8 s to reach it.
    const server = { totalRate: 16 * MB, connectionRate: 1 * MB, rttMs: 300 };
    const long = new ConnectionCount();
    run(long, { ...server, fileBytes: 64 * MB }, 4_000);
    expect(long.limit(4_000)).toBeGreaterThan(8);
    const short = new ConnectionCount();
    run(short, { ...server, fileBytes: 8 * MB }, 4_000);
    expect(short.limit(4_000)).toBe(8);
    expect(short.reason).toEqual({ kind: 'ends-before-warm', count: 8 });
  });

  it('starts far from a server that has not answered for the far round trip yet', () => {
    const policy = new ConnectionCount();
    policy.observe(0, { totalRate: 0, connections: 2, unansweredMs: 100 });
    expect(policy.limit(0)).toBe(2);
    policy.observe(25, { totalRate: 0, connections: 2, unansweredMs: 125 });
    expect(policy.limit(25)).toBe(8);
    // Its answer shows it 300 ms away: the far start stands.
    for (let now = 300; now <= 1_000; now += 25) policy.observe(now, { totalRate: 0.5 * MB, connections: 8, rttMs: 300 });
    expect(policy.limit(1_000)).toBe(8);
  });

  it('gives a far start back when the first slow round trips were the client, not the server', () => {
    const policy = new ConnectionCount();
    policy.observe(0, { totalRate: 0, connections: 2, rttMs: 150 });
    expect(policy.limit(0)).toBe(8);
    expect(policy.reason).toEqual({ kind: 'far-start', count: 8, ms: 150, answered: true });
    // Then it answers in 20 ms, and the connections open share its 8 MB/s: the far start is given back.
    const limits = new Set<number>();
    for (let now = 20; now <= 3_000; now += 20) {
      limits.add(policy.limit(now));
      policy.observe(now, { totalRate: 8 * MB, connections: policy.limit(now), rttMs: 20 });
    }
    expect(Math.max(...limits)).toBe(8);
    expect(policy.limit(3_000)).toBeLessThanOrEqual(2);
    expect(policy.reason).toMatchObject({ kind: 'gave-back' });
  });

  it('backs off on 503 and remembers the limit: a server that allows two sees no storm', () => {
    const policy = new ConnectionCount();
    const trace = run(policy, { totalRate: 8 * MB, connectionRate: 1 * MB, rttMs: 20, maxConnections: 2 }, 120_000);
    expect(policy.serverLimit).toBe(2);
    expect(policy.limit(120_000)).toBe(2);
    expect([
      { kind: 'server-allows', count: 2, status: 503 },
      { kind: 'each-pays', count: 2 },
    ]).toContainEqual(policy.reason);
    // The first step past two, then one try past the limit 30 s later and one 60 s after that.
    expect(trace.refusals).toBeLessThanOrEqual(4);
    expect(trace.samples.filter(([t, limit]) => t > 1_000 && limit > 3)).toEqual([]);
  });

  it('honours Retry-After and, without it, backs off exponentially', () => {
    const policy = new ConnectionCount();
    policy.refused(0, { status: 503, retryAfterMs: 3_000, connections: 0 });
    expect(policy.limit(0)).toBe(0);
    expect(policy.limit(2_999)).toBe(0);
    expect(policy.limit(3_000)).toBe(1);
    expect(policy.reason).toEqual({ kind: 'refused', status: 503, waitMs: 3_000 });

    const plain = new ConnectionCount();
    plain.refused(0, { connections: 0 });
    expect(plain.reason).toEqual({ kind: 'refused', status: undefined, waitMs: 1_000 });
    expect(plain.limit(999)).toBe(0);
    expect(plain.limit(1_000)).toBe(1);
    plain.refused(1_000, { connections: 0 });
    expect(plain.limit(2_999)).toBe(0);
    expect(plain.limit(3_000)).toBe(1);
  });

  it('counts a burst of refusals from one step once', () => {
    const policy = new ConnectionCount();
    policy.refused(0, { status: 429, connections: 2 });
    policy.refused(5, { status: 429, connections: 2 });
    policy.refused(10, { status: 429, connections: 2 });
    expect(policy.limit(10)).toBe(2);
    expect(policy.serverLimit).toBe(2);
    policy.refused(1_000, { status: 429, connections: 0 });
    // The second refusal in a row: 2 s, not 8 s.
    expect(policy.limit(2_999)).toBe(0);
    expect(policy.limit(3_000)).toBe(1);
  });

  it('gives back connections that stop paying when the server becomes the bottleneck', () => {
    const policy = new ConnectionCount();
    const server: Server = { totalRate: 16 * MB, connectionRate: 1 * MB, rttMs: 20 };
    const trace = run(policy, server, 90_000, (now, s) => {
      // At 5 s the server gets busy: 3 MB/s in all, however many connections.
      if (now === 5_000) Object.assign(s, { totalRate: 3 * MB, connectionRate: undefined });
    });
    expect(limitAt(trace, 4_900)).toBe(16);
    expect(policy.limit(90_000)).toBeLessThanOrEqual(3);
    expect(['gave-back', 'each-pays', 'one-more-short']).toContain(policy.reason.kind);
  });

  it('does not keep a connection whose gain is within the noise (under 10 % of the total)', () => {
    const policy = new ConnectionCount({ initial: 10, max: 11 });
    /** Observations every 20 ms from `from` to `to`, at a steady total rate. */
    const feed = (from: number, to: number, connections: number, totalRate: number) => {
      for (let now = from; now < to; now += 20) policy.observe(now, { totalRate, connections, rttMs: 20 });
    };
    feed(0, 1_000, 10, 10 * MB);
    expect(policy.limit(1_000)).toBe(11);
    // The eleventh brings 0.6 MB/s: more than half an average connection, but 6 % of the total.
    feed(1_000, 2_000, 11, 10.6 * MB);
    expect(policy.limit(2_000)).toBe(10);
    expect(policy.reason).toEqual({
      kind: 'one-more-short',
      count: 10,
      gain: { kind: 'small', server: expect.closeTo(0.06, 3) as number },
    });
  });

  /** A policy steady at two connections on a server of `rate` in all, `rttMs` away, reset at 3 s. */
  const resetAfterSteady = (rate: number, rttMs: number) => {
    const policy = new ConnectionCount();
    for (let now = 0; now <= 3_000; now += 25) policy.observe(now, { totalRate: rate, connections: policy.limit(now), rttMs });
    expect(policy.limit(3_000)).toBe(2);
    policy.reset(3_000);
    return policy;
  };

  it('after a reset opens as many connections as carry the rate from their first round trip while they warm up, then returns to the count', () => {
    // A server at 8 MB/s in all, 50 ms away: steady at two connections (4 MB/s each).
    const policy = resetAfterSteady(8 * MB, 50);
    // 400 kB per round trip are 28 first windows of 14.6 kB: the maximum, 16. Slow start reaches 4 MB/s
    // (200 kB per 50 ms round trip, 13.7 first windows) in log2(13.7) = 3.8 round trips, and one more: 239 ms.
    expect(policy.limit(3_000)).toBe(16);
    expect(policy.limit(3_238)).toBe(16);
    // Nothing is judged meanwhile: the count after a reset is not a step.
    for (let now = 3_025; now < 3_250; now += 25) policy.observe(now, { totalRate: 8 * MB, connections: 16, rttMs: 50 });
    expect(policy.limit(3_250)).toBe(2);
    expect(policy.reason).toMatchObject({ kind: 'one-more-short', count: 2, gain: { kind: 'small' } });
  });

  it('after a reset of a slow server opens twice the count: each reaches the rate a round trip sooner', () => {
    // 1 MB/s at 20 ms: 20 kB per round trip, two first windows.
    expect(resetAfterSteady(1 * MB, 20).limit(3_000)).toBe(4);
  });

  it('after a reset stays within a known limit and the maximum', () => {
    const limited = new ConnectionCount();
    limited.refused(0, { status: 503, connections: 2 });
    limited.reset(5_000);
    expect(limited.limit(5_000)).toBe(2);
    const capped = new ConnectionCount({ max: 3 });
    capped.reset(0);
    expect(capped.limit(0)).toBe(3);
  });

  it('rejects a maximum that is not a whole number ≥ 1', () => {
    expect(() => new ConnectionCount({ max: 0 })).toThrow(/whole number ≥ 1/);
  });
});

describe('maxConnectionsFor', () => {
  const perSite = { 'example.org': 1, 'fast.example.org': 8 };
  it('takes the most specific per-site override, else the default', () => {
    expect(maxConnectionsFor('https://fast.example.org/f.iso', 16, perSite)).toBe(8);
    expect(maxConnectionsFor('https://dl.example.org/f.iso', 16, perSite)).toBe(1);
    expect(maxConnectionsFor('https://EXAMPLE.org/f.iso', 16, perSite)).toBe(1);
    expect(maxConnectionsFor('https://example.com/f.iso', 16, perSite)).toBe(16);
    expect(maxConnectionsFor('not a url', 16, perSite)).toBe(16);
    // A host named like an object's built-in property is not an override.
    expect(maxConnectionsFor('http://constructor/x', 16, {})).toBe(16);
  });
});
