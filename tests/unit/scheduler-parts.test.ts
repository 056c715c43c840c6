import { describe, expect, it } from 'vitest';
import { BlockWindow } from '../../src/engine/scheduler/block-window';
import { DeadlineEstimator } from '../../src/engine/scheduler/deadlines';
import { Plan } from '../../src/engine/scheduler/plan';
import { Reference } from '../../src/engine/scheduler/reference';
import { missingRanges, normalizeRanges } from '../../src/engine/ranges';

const KiB = 1024;

describe('Plan', () => {
  it('hands out the first unclaimed bytes, aligned, and skips stored and claimed ones', () => {
    const plan = new Plan(1000 * KiB, [{ start: 0, end: 100 * KiB }]);
    expect(plan.nextBlock([], 200 * KiB + 5)).toEqual({ start: 100 * KiB, end: 256 * KiB });
    expect(plan.nextBlock([{ start: 100 * KiB, end: 300 * KiB }], 1e9)).toEqual({ start: 300 * KiB, end: 1000 * KiB });
    expect(plan.nextBlock([{ start: 100 * KiB, end: 1000 * KiB }], 1e9)).toBeUndefined();
  });

  it('starts at `from` and wraps to the start', () => {
    const plan = new Plan(1000, []);
    expect(plan.nextBlock([], 100, 500)).toEqual({ start: 500, end: 600 });
    expect(plan.nextBlock([{ start: 500, end: 1000 }], 100, 700)).toEqual({ start: 0, end: 100 });
  });

  it('tracks completion, coverage and discards', () => {
    const plan = new Plan(300, []);
    plan.addStored(0, 100);
    plan.addStored(200, 300);
    expect(plan.isComplete()).toBe(false);
    expect(plan.unclaimed([])).toEqual([{ start: 100, end: 200 }]);
    plan.addStored(100, 200);
    expect(plan.isComplete()).toBe(true);
    expect(plan.covers(50, 250)).toBe(true);
    plan.discard(120, 180);
    expect(plan.storedRanges()).toEqual([{ start: 0, end: 120 }, { start: 180, end: 300 }]);
    expect(plan.storedBytes()).toBe(240);
  });

  it('agrees with missingRanges for random stored sets', () => {
    for (let trial = 0; trial < 200; trial++) {
      const size = 1 + Math.floor(Math.random() * 5000);
      const ranges = Array.from({ length: 5 }, () => {
        const a = Math.floor(Math.random() * size);
        return { start: a, end: Math.min(size, a + Math.floor(Math.random() * 800)) };
      });
      const plan = new Plan(size, ranges);
      expect(plan.unclaimed([])).toEqual(missingRanges(normalizeRanges(ranges), size));
    }
  });
});

describe('DeadlineEstimator', () => {
  it('gives the first block 3 s, doubling per re-request', () => {
    const d = new DeadlineEstimator();
    expect(d.timeoutMs(undefined, 0)).toBe(3000);
    expect(d.timeoutMs(500, 1)).toBe(6000);
  });

  it('bounds a block by its expected time times the EWMA plus deviations of lateness', () => {
    const d = new DeadlineEstimator();
    for (let i = 0; i < 20; i++) d.observe(1000, 1000);
    expect(d.averageRatio()).toBeCloseTo(1, 1);
    // Punctual blocks: the bound falls to its floor of 1.5 × expected.
    expect(d.timeoutMs(1000, 0)).toBe(1500);
    for (let i = 0; i < 20; i++) d.observe(3000, 1000);
    expect(d.timeoutMs(1000, 0)).toBeGreaterThan(3000);
    expect(d.timeoutMs(1000, 0)).toBeLessThanOrEqual(6000);
  });
});

describe('BlockWindow', () => {
  it('grows by 1/log(w) per fast block and shrinks by one per missed deadline, within bounds', () => {
    const w = new BlockWindow(1, 4);
    w.fastBlock();
    expect(w.value).toBe(2);
    w.fastBlock();
    expect(w.value).toBeCloseTo(2 + 1 / Math.log(2));
    for (let i = 0; i < 50; i++) w.fastBlock();
    expect(w.value).toBe(4);
    expect(w.allows(3)).toBe(true);
    expect(w.allows(4)).toBe(false);
    for (let i = 0; i < 10; i++) w.deadlineMissed();
    expect(w.value).toBe(1);
  });
});

describe('Reference', () => {
  it('collects the first bytes in order, and resolves waiters when complete', async () => {
    const ref = new Reference();
    ref.setSize(20 * KiB);
    const ready = ref.ready(new AbortController().signal);
    ref.offer(0, new Uint8Array(10 * KiB).fill(1));
    ref.offer(20 * KiB, new Uint8Array(10)); // not contiguous: ignored
    ref.offer(10 * KiB, new Uint8Array(10 * KiB).fill(2));
    const bytes = await ready;
    expect(bytes.length).toBe(Reference.PROBE_BYTES);
    expect(bytes[0]).toBe(1);
    expect(bytes[Reference.PROBE_BYTES - 1]).toBe(2);
  });

  it('rejects waiters when abandoned, and for tiny files compares the whole file', async () => {
    const ref = new Reference();
    const waiting = ref.ready(new AbortController().signal);
    ref.abandon(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    const tiny = new Reference();
    tiny.setSize(3);
    tiny.offer(0, new Uint8Array([1, 2, 3, 4]));
    expect(await tiny.ready(new AbortController().signal)).toEqual(new Uint8Array([1, 2, 3]));
  });
});
