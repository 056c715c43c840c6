import { describe, expect, it } from 'vitest';
import { benchMs, DeadlineEstimator, lateDecisions, SILENT_MS } from '../../../../src/engine/scheduler/policies/deadlines';
import { MiB, mirror, request, type TestMirror } from '../views';

const context = (mirrors: TestMirror[], now: number, windowHasRoom = true) => ({ now, mirrors, connections: () => 2, windowHasRoom });

describe('deadlines (CoBlitz)', () => {
  it('gives a block 3 s before any sample, doubling per re-request of the same bytes', () => {
    const d = new DeadlineEstimator();
    expect(d.timeoutMs(undefined, 0)).toBe(3000);
    expect(d.timeoutMs(500, 1)).toBe(6000);
    expect(d.deadline(1000, undefined, 0, false)).toBe(4000);
    // A player's bytes get half the time.
    expect(d.deadline(1000, undefined, 0, true)).toBe(2500);
  });

  it('bounds a block by its expected time times the EWMA plus four deviations of lateness', () => {
    const d = new DeadlineEstimator();
    for (let i = 0; i < 20; i++) d.observe(1000, 1000);
    expect(d.averageRatio()).toBeCloseTo(1, 1);
    expect(d.timeoutMs(1000, 0)).toBe(1500);
    for (let i = 0; i < 20; i++) d.observe(3000, 1000);
    expect(d.timeoutMs(1000, 0)).toBeGreaterThan(3000);
    expect(d.timeoutMs(1000, 0)).toBeLessThanOrEqual(6000);
  });

  it('reports a block finished faster than the average so far', () => {
    const d = new DeadlineEstimator();
    expect(d.observe(1000, 1000)).toBe(false);
    expect(d.observe(500, 1000)).toBe(true);
    expect(d.observe(2000, 1000)).toBe(false);
  });

  it('hedges a late block on another mirror, the one expected to finish it first', () => {
    const late = mirror('late', { rate: 1 * MiB, inFlight: 1 });
    const slow = mirror('slow', { rate: 2 * MiB });
    const fast = mirror('fast', { rate: 8 * MiB });
    const r = request(late, 0, 4 * MiB, { pos: 1 * MiB, lastByteAt: 9_900 });
    const decisions = lateDecisions(r, context([late, slow, fast], 10_000));
    expect(decisions).toEqual([{ kind: 'duplicate', mirror: fast, of: r }]);
  });

  it('makes at most two copies, and none when the window is full', () => {
    const a = mirror('a', { rate: 1 * MiB, inFlight: 1 });
    const b = mirror('b', { rate: 1 * MiB, inFlight: 1 });
    const c = mirror('c', { rate: 8 * MiB });
    const r = request(a, 0, 4 * MiB, { lastByteAt: 10_000 });
    expect(lateDecisions(r, context([a, b, c], 10_000, false))).toEqual([]);
    r.group.fetches.add(request(b, 0, 4 * MiB));
    expect(lateDecisions(r, context([a, b, c], 10_000))).toEqual([]);
  });

  it('never hedges a block whose bytes have all arrived (it waits on the disk): an empty range would be asked', () => {
    const a = mirror('a', { rate: 1 * MiB, inFlight: 1 });
    const b = mirror('b', { rate: 8 * MiB });
    const done = request(a, 0, 4 * MiB, { pos: 4 * MiB, lastByteAt: 10_000 });
    expect(lateDecisions(done, context([a, b], 10_000))).toEqual([]);
  });

  it('never hedges on the late mirror itself, or on a mirror that is backed off or full', () => {
    const alone = mirror('alone', { rate: 1 * MiB, inFlight: 1 });
    const benched = mirror('benched', { rate: 8 * MiB, backoffUntil: 20_000 });
    const full = mirror('full', { rate: 8 * MiB, inFlight: 3 });
    const r = request(alone, 0, 4 * MiB, { lastByteAt: 10_000 });
    expect(lateDecisions(r, context([alone, benched, full], 10_000))).toEqual([]);
  });

  it('benches a silent mirror, exponentially longer per miss in a row; a slow one is not benched', () => {
    const silent = mirror('silent', { rate: 1 * MiB, inFlight: 1 });
    const other = mirror('other', { rate: 1 * MiB, inFlight: 2 });
    const now = 10_000;
    const quiet = request(silent, 0, 4 * MiB, { lastByteAt: now - SILENT_MS - 1 });
    expect(lateDecisions(quiet, context([silent, other], now))[0]).toEqual({ kind: 'bench', mirror: silent, misses: 1, until: now + 500 });
    silent.deadlineMisses = 3;
    expect(lateDecisions(quiet, context([silent, other], now))[0]).toMatchObject({ kind: 'bench', misses: 4, until: now + 4000 });
    expect(benchMs(20)).toBe(10_000);
    const slow = request(silent, 0, 4 * MiB, { lastByteAt: now - 100 });
    expect(lateDecisions(slow, context([silent, other], now)).some((d) => d.kind === 'bench')).toBe(false);
  });

  it('never benches a mirror alone: nobody could take its work', () => {
    const only = mirror('only', { rate: 1 * MiB, inFlight: 1 });
    const r = request(only, 0, 4 * MiB, { lastByteAt: 0 });
    expect(lateDecisions(r, context([only], 10_000))).toEqual([]);
  });
});
