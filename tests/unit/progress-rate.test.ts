import { describe, expect, it } from 'vitest';
import { ProgressRate, RATE_WINDOW_MS, STALLED_AFTER_MS } from '../../src/engine/progress-rate';
import { FakeClock } from '../support/fake-clock';

/** `bytesPerSecond` arriving in chunks every `everyMs` for `ms`, in virtual time. */
function flow(clock: FakeClock, meter: ProgressRate, bytesPerSecond: number, ms: number, everyMs = 50): void {
  for (let t = 0; t < ms; t += everyMs) {
    clock.advance(everyMs);
    meter.add((bytesPerSecond * everyMs) / 1000);
  }
}

describe('ProgressRate', () => {
  it('is 0, with no time left, before the first byte', () => {
    const clock = new FakeClock(1_000);
    const meter = new ProgressRate(clock);
    expect(meter.rate()).toBe(0);
    expect(meter.etaSeconds(1_000)).toBeUndefined();
    clock.advance(1_000);
    expect(meter.rate()).toBe(0);
  });

  it('reads the first chunks over a second at least, not as a burst', () => {
    const clock = new FakeClock();
    const meter = new ProgressRate(clock);
    clock.advance(100);
    meter.add(64 * 1024);
    expect(meter.rate()).toBe(64 * 1024);
    clock.advance(100);
    meter.add(64 * 1024);
    expect(meter.rate()).toBe(128 * 1024);
  });

  it('measures a steady flow, and the time left at it', () => {
    const clock = new FakeClock();
    const meter = new ProgressRate(clock);
    flow(clock, meter, 2_000_000, 10_000);
    expect(meter.rate()).toBeCloseTo(2_000_000, -3);
    expect(meter.etaSeconds(50_000_000)).toBeCloseTo(25, 0);
    expect(meter.stalled()).toBe(false);
  });

  it('takes the speed from the last few seconds only', () => {
    const clock = new FakeClock();
    const meter = new ProgressRate(clock);
    flow(clock, meter, 10_000_000, 20_000);
    flow(clock, meter, 1_000_000, RATE_WINDOW_MS + 200);
    // A whole-download average would still say about 8 MB/s.
    expect(meter.rate()).toBeGreaterThan(900_000);
    expect(meter.rate()).toBeLessThan(1_200_000);
  });

  it('falls to 0, with the time left unknown, once nothing has arrived for a few seconds', () => {
    const clock = new FakeClock();
    const meter = new ProgressRate(clock);
    flow(clock, meter, 2_000_000, 10_000);
    clock.advance(1_000);
    // Quiet for a moment: lower, not yet stalled.
    expect(meter.stalled()).toBe(false);
    expect(meter.rate()).toBeGreaterThan(0);
    expect(meter.rate()).toBeLessThan(2_000_000);
    clock.advance(STALLED_AFTER_MS - 1_000);
    expect(meter.stalled()).toBe(true);
    expect(meter.quietMs()).toBe(STALLED_AFTER_MS);
    expect(meter.rate()).toBe(0);
    expect(meter.etaSeconds(50_000_000)).toBeUndefined();
    // A 43-second silence: still 0, never the numbers from before it.
    clock.advance(40_000);
    expect(meter.rate()).toBe(0);
  });

  it('comes back when the bytes do, measured from then: neither the pace before the silence nor a fraction of the new one', () => {
    const clock = new FakeClock();
    const meter = new ProgressRate(clock);
    flow(clock, meter, 2_000_000, 10_000);
    clock.advance(15_000);
    expect(meter.stalled()).toBe(true);
    // The first chunk after it: not stalled, and no burst of speed from one chunk (measured over a second at least).
    clock.advance(50);
    meter.add(50_000);
    expect(meter.stalled()).toBe(false);
    expect(meter.rate()).toBe(50_000);
    flow(clock, meter, 1_000_000, 1_000);
    expect(meter.rate()).toBeGreaterThan(950_000);
    expect(meter.rate()).toBeLessThanOrEqual(1_050_000);
    flow(clock, meter, 1_000_000, RATE_WINDOW_MS);
    expect(meter.rate()).toBeCloseTo(1_000_000, -4);
    expect(meter.etaSeconds(10_000_000)).toBeCloseTo(10, 0);
  });

  it('is not stalled while a speed limit holds the bytes back, and spans the bursts a limit reads in', () => {
    const clock = new FakeClock();
    const meter = new ProgressRate(clock);
    // 10 KB/s read 64 KB at a time: a chunk, then 6.4 s of waiting on the limit.
    for (let i = 0; i < 5; i++) {
      meter.add(64_000);
      for (let t = 0; t < 6_400; t += 400) {
        clock.advance(400);
        expect(meter.stalled(true)).toBe(false);
        expect(meter.rate(true)).toBeGreaterThan(0);
      }
    }
    expect(meter.rate(true)).toBeGreaterThan(4_000);
    expect(meter.rate(true)).toBeLessThanOrEqual(10_000);
    // The limit let the bytes through, and the server sends none: stalled, counted from then.
    clock.advance(STALLED_AFTER_MS - 1);
    expect(meter.stalled()).toBe(false);
    clock.advance(1);
    expect(meter.stalled()).toBe(true);
    expect(meter.rate()).toBe(0);
  });

  it('keeps a bounded number of samples however many chunks arrive', () => {
    const clock = new FakeClock();
    const meter = new ProgressRate(clock);
    flow(clock, meter, 100_000_000, 60_000, 1);
    const samples = (meter as unknown as { samples: unknown[] }).samples.length;
    expect(samples).toBeLessThanOrEqual(70);
    expect(meter.rate()).toBeCloseTo(100_000_000, -5);
  });
});
