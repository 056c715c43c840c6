import { describe, expect, it } from 'vitest';
import { Plan } from '../../../../src/engine/scheduler/loop/plan';
import { Reference } from '../../../../src/engine/scheduler/loop/reference';
import { seededRandom } from '../views';

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
    expect(plan.unclaimed([])).toEqual([{ start: 120, end: 180 }]);
    expect(plan.covers(0, 120) && plan.covers(180, 300)).toBe(true);
  });

  it('finds exactly the bytes neither stored nor claimed, for random sets (a byte map as the oracle)', () => {
    const random = seededRandom(20261123);
    for (let trial = 0; trial < 300; trial++) {
      const size = 1 + Math.floor(random() * 3000);
      const span = () => {
        const a = Math.floor(random() * size);
        return { start: a, end: Math.min(size, a + Math.floor(random() * 600)) };
      };
      const stored = Array.from({ length: 4 }, span);
      const claims = Array.from({ length: 3 }, span);
      const covered = new Uint8Array(size);
      for (const r of [...stored, ...claims]) covered.fill(1, r.start, r.end);
      const expected: Array<{ start: number; end: number }> = [];
      for (let i = 0; i < size; i++) {
        if (covered[i]) continue;
        const last = expected[expected.length - 1];
        if (last && last.end === i) last.end = i + 1;
        else expected.push({ start: i, end: i + 1 });
      }
      const plan = new Plan(size, stored);
      expect(plan.unclaimed(claims), `trial ${trial}`).toEqual(expected);
      const storedOnly = new Uint8Array(size);
      for (const r of stored) storedOnly.fill(1, r.start, r.end);
      expect(plan.isComplete(), `trial ${trial}`).toBe(storedOnly.every(Boolean));
    }
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
