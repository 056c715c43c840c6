import { describe, expect, it } from 'vitest';
import { RateWindow } from '../../../../src/engine/scheduler/connections/rate-window';
import { RefusalOrReset, TOGETHER_MS } from '../../../../src/engine/scheduler/connections/refusal-or-reset';
import { ServerLimit } from '../../../../src/engine/scheduler/connections/server-limit';
import { endsBeforeWarm, farStartCount, INITIAL_WINDOW_BYTES, warmupMs } from '../../../../src/engine/scheduler/connections/slow-start';

const MB = 1_000_000;

describe('warmupMs', () => {
  const options = { warmupMs: 100, warmupRtts: 6 };
  it('waits the round trips slow start needs to reach what a connection carries, and one more', () => {
    // 1 MB/s at 50 ms: 50 kB per round trip, 3.4 initial windows: 1.8 doublings (not 2: the last round trip's
    // window is more than the rate needs), then one more round trip.
    expect(warmupMs(1 * MB, 50, options)).toBeCloseTo(50 * (1 + Math.log2(50_000 / INITIAL_WINDOW_BYTES)));
    expect(warmupMs(1 * MB, 50, options)).toBeLessThan(140);
    // 16 initial windows: four doublings and one.
    expect(warmupMs((16 * INITIAL_WINDOW_BYTES * 1000) / 100, 100, options)).toBe(5 * 100);
  });
  it('is at least warmupMs and at most warmupRtts round trips', () => {
    expect(warmupMs(1, 10, options)).toBe(100);
    expect(warmupMs(1_000 * MB, 150, options)).toBe(6 * 150);
  });
});

describe('endsBeforeWarm', () => {
  const options = { warmupMs: 100, warmupRtts: 6 };
  it('is true when the rest of the download is shorter than twice the warm-up of a new connection', () => {
    // 1 MB/s at 50 ms: warm after 150 ms; 0.2 MB left at 1 MB/s is 200 ms, 0.4 MB 400 ms.
    expect(endsBeforeWarm(0.2 * MB, 1 * MB, 1 * MB, 50, options)).toBe(true);
    expect(endsBeforeWarm(0.4 * MB, 1 * MB, 1 * MB, 50, options)).toBe(false);
    // Unknown size or no rate yet: no verdict.
    expect(endsBeforeWarm(undefined, 1 * MB, 1 * MB, 50, options)).toBe(false);
    expect(endsBeforeWarm(0.2 * MB, 0, 1 * MB, 50, options)).toBe(false);
  });
});

describe('farStartCount', () => {
  it('quadruples the first count for a server at least farRttMs away, within the maximum', () => {
    expect(farStartCount(150, 2, 16, 120)).toBe(8);
    expect(farStartCount(150, 2, 3, 120)).toBe(3);
    expect(farStartCount(119, 2, 16, 120)).toBeUndefined();
  });
});

describe('RateWindow', () => {
  const options = { measureMs: 150, measureRtts: 2, minMeasureBytes: 256 * 1024 };
  it('gives the rate once the window spans enough time and bytes, over the last window only', () => {
    const window = new RateWindow(options);
    window.add(0, 0, 4);
    for (let now = 20; now <= 100; now += 20) window.add(now, 4 * MB, 4);
    expect(window.rate(100, 20)).toBeUndefined(); // 100 ms: shorter than 150 ms
    for (let now = 120; now <= 400; now += 20) window.add(now, now <= 200 ? 4 * MB : 8 * MB, 4);
    const measured = window.rate(400, 20)!;
    expect(measured.startedAt).toBe(0);
    // The window keeps the latest observations spanning 150 ms: the 8 MB/s since 200 ms.
    expect(measured.firstAt).toBeGreaterThanOrEqual(200);
    expect(measured.rate).toBeCloseTo(8 * MB, -3);
  });
  it('starts again when the count changes, and after a rate was used', () => {
    const window = new RateWindow(options);
    for (let now = 0; now <= 400; now += 20) window.add(now, 4 * MB, 4);
    expect(window.rate(400, 20)).toBeDefined();
    window.restart(400);
    expect(window.rate(400, 20)).toBeUndefined();
    window.add(420, 4 * MB, 8);
    window.add(440, 4 * MB, 8);
    expect(window.rate(440, 20)).toBeUndefined();
  });
  it('spans twice its longest gap between observations', () => {
    const window = new RateWindow(options);
    window.add(0, 0, 4);
    window.add(300, 16 * MB, 4); // one observation after a 300 ms pause
    window.add(350, 16 * MB, 4);
    window.add(550, 16 * MB, 4);
    expect(window.rate(550, 20)).toBeUndefined(); // 550 ms < 2 × 300 ms
    for (let now = 600; now <= 700; now += 50) window.add(now, 16 * MB, 4);
    expect(window.rate(700, 20)).toBeDefined();
  });

  it('judges regular observations (one per scheduler tick) as soon as its time and bytes are enough', () => {
    const window = new RateWindow({ measureMs: 60, measureRtts: 2, minMeasureBytes: 128 * 1024 });
    window.add(0, 0, 4);
    window.add(30, 4 * MB, 4);
    expect(window.rate(30, 20)).toBeUndefined();
    window.add(60, 4 * MB, 4);
    expect(window.rate(60, 20)?.rate).toBeCloseTo(4 * MB);
  });
  it("tells how much faster the whole download received in the window's second half than in its first", () => {
    const options = { measureMs: 100, measureRtts: 2, minMeasureBytes: 128 * 1024 };
    const ramping = new RateWindow(options);
    ramping.add(0, 0, 2);
    // The download ramps from 8 to 16 MB/s while this server holds 4 MB/s.
    for (let now = 20; now <= 100; now += 20) ramping.add(now, 4 * MB, 2, 8 * MB + now * 80_000);
    expect(ramping.rate(100, 20)!.downloadRise).toBeGreaterThan(0.3);
    const steady = new RateWindow(options);
    steady.add(0, 0, 2);
    for (let now = 20; now <= 100; now += 20) steady.add(now, 4 * MB, 2, 16 * MB);
    expect(steady.rate(100, 20)!.downloadRise).toBeCloseTo(0);
  });

  it("gives the whole download's level over the four windows before the last, across changes of the count", () => {
    const window = new RateWindow({ measureMs: 60, measureRtts: 2, minMeasureBytes: 128 * 1024 });
    window.add(0, 0, 2);
    for (let now = 20; now <= 60; now += 20) window.add(now, 4 * MB, 2, 16 * MB);
    expect(window.rate(60, 20)!.downloadLevel).toBe(0); // nothing before the first window
    // 16 MB/s until 300 ms at two connections, then 12 MB/s at three (a dip of the download).
    for (let now = 80; now <= 300; now += 20) window.add(now, 4 * MB, 2, 16 * MB);
    for (let now = 320; now <= 400; now += 20) window.add(now, 4 * MB, 3, 12 * MB);
    const measured = window.rate(400, 20)!;
    expect(measured.downloadRate).toBeCloseTo(12 * MB, -3);
    expect(measured.firstAt).toBe(340);
    // The 240 ms before the last window: 200 of them at 16 MB/s, 40 at 12.
    expect(measured.downloadLevel).toBeCloseTo((200 * 16 * MB + 40 * 12 * MB) / 240, -4);
  });
});

describe('ServerLimit', () => {
  const options = { backoffMs: 1_000, maxBackoffMs: 60_000, limitReprobeMs: 30_000 };
  it('remembers the fewest working connections and tries one more only after limitReprobeMs, doubling', () => {
    const limit = new ServerLimit(options);
    expect(limit.ceiling(0, 16)).toBe(16);
    expect(limit.refused(0, 2, undefined)).toBe(1_000);
    expect(limit.known).toBe(2);
    expect(limit.ceiling(29_999, 16)).toBe(2);
    expect(limit.ceiling(30_000, 16)).toBe(3);
    limit.delivered();
    limit.refused(30_000, 3, undefined);
    expect(limit.known).toBe(2);
    expect(limit.ceiling(89_999, 16)).toBe(2);
    expect(limit.ceiling(90_000, 16)).toBe(3);
  });
  it('blocks until Retry-After, else backs off exponentially; a burst counts once', () => {
    const limit = new ServerLimit(options);
    expect(limit.refused(0, 0, 3_000)).toBe(3_000);
    expect(limit.blocked(2_999)).toBe(true);
    expect(limit.blocked(3_000)).toBe(false);
    limit.refused(3_000, 0, undefined);
    limit.refused(3_010, 0, undefined); // the same burst: no longer back-off
    expect(limit.blocked(4_999)).toBe(true);
    expect(limit.blocked(5_000)).toBe(false);
    expect(limit.refused(5_000, 0, undefined)).toBe(4_000);
    limit.delivered();
    expect(limit.refused(20_000, 0, undefined)).toBe(1_000);
  });
  it('forgets the limit once more connections paid', () => {
    const limit = new ServerLimit(options);
    limit.refused(0, 2, undefined);
    limit.surpassed(2);
    expect(limit.known).toBe(2);
    limit.surpassed(3);
    expect(limit.known).toBeUndefined();
  });
});

describe('RefusalOrReset', () => {
  it('takes a lone close before answering for a refusal, once the moment is past', () => {
    const judge = new RefusalOrReset();
    judge.broke(1_000);
    judge.closedBeforeAnswering(1_000, 3);
    expect(judge.refusal(1_000 + TOGETHER_MS)).toBeUndefined();
    expect(judge.refusal(1_001 + TOGETHER_MS)).toBe(3);
    expect(judge.refusal(2_000)).toBeUndefined(); // decided once
  });
  it('takes it for a reset when other requests broke at the same moment', () => {
    const judge = new RefusalOrReset();
    judge.broke(990);
    judge.broke(1_000);
    judge.closedBeforeAnswering(1_000, 3);
    judge.broke(1_050);
    expect(judge.refusal(1_200)).toBeUndefined();
  });
  it('reports a reset once, at the second request that broke with another', () => {
    const judge = new RefusalOrReset();
    expect(judge.broke(1_000)).toBe(false);
    expect(judge.broke(1_010)).toBe(true);
    expect(judge.broke(1_020)).toBe(false);
    expect(judge.broke(1_500)).toBe(false); // alone: not a reset
    expect(judge.broke(2_000)).toBe(false);
    expect(judge.broke(2_005)).toBe(true);
  });
  it('reports a reset when the only body on its way broke, once, and not for a lone break of another kind', () => {
    const judge = new RefusalOrReset();
    expect(judge.broke(1_000)).toBe(false); // before its headers, or with other bodies on their way
    expect(judge.broke(1_500, true)).toBe(true);
    expect(judge.broke(1_550, true)).toBe(false); // the same reset
    expect(judge.broke(2_000, true)).toBe(true);
  });
  it('ignores breaks long before or after', () => {
    const judge = new RefusalOrReset();
    judge.broke(500);
    judge.broke(1_000);
    judge.closedBeforeAnswering(1_000, 1);
    expect(judge.refusal(1_200)).toBe(1);
  });
});
