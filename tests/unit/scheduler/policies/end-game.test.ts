import { describe, expect, it } from 'vitest';
import { pickDuplicate } from '../../../../src/engine/scheduler/policies/end-game';
import { MiB, mirror, request } from '../views';

describe('end game (Rodriguez & Biersack)', () => {
  const now = 10_000;

  it('duplicates a block only where the idle mirror would finish it sooner', () => {
    const slow = mirror('slow', { rate: 1 * MiB, inFlight: 1 });
    const fast = mirror('fast', { rate: 8 * MiB });
    const late = request(slow, 0, 4 * MiB, { pos: 1 * MiB, issuedAt: 0 });
    // The slow mirror needs 3 s for its last 3 MiB; the fast one about 0.4 s.
    expect(pickDuplicate(fast, [late], now, false)).toBe(late);
    // The other way round the duplicate would arrive later: no copy.
    const quick = request(fast, 0, 4 * MiB, { pos: 1 * MiB });
    fast.inFlight = 1;
    slow.inFlight = 0;
    expect(pickDuplicate(slow, [quick], now, false)).toBeUndefined();
  });

  it('counts the idle mirror round trip: a far mirror does not duplicate what is nearly done', () => {
    const near = mirror('near', { rate: 2 * MiB, inFlight: 1, rttMs: 5 });
    const far = mirror('far', { rate: 20 * MiB, rttMs: 300 });
    // 256 KiB left at 2 MiB/s: 125 ms; the far mirror needs its 300 ms round trip first.
    const almost = request(near, 0, 1 * MiB, { pos: 768 * 1024 });
    expect(pickDuplicate(far, [almost], now, false)).toBeUndefined();
  });

  it('requires a clear gain (under three quarters of the time left)', () => {
    const a = mirror('a', { rate: 1 * MiB, inFlight: 1 });
    const b = mirror('b', { rate: 1.2 * MiB });
    expect(pickDuplicate(b, [request(a, 0, 2 * MiB, { pos: 1 })], now, false)).toBeUndefined();
  });

  it('never makes a third copy, never copies its own request, never a probe', () => {
    const slow = mirror('slow', { rate: 1 * MiB, inFlight: 1 });
    const fast = mirror('fast', { rate: 8 * MiB, inFlight: 1 });
    const idle = mirror('idle', { rate: 8 * MiB });
    const twice = request(slow, 0, 4 * MiB, { pos: 1 });
    twice.group.fetches.add(request(fast, 1, 4 * MiB));
    expect(pickDuplicate(idle, [twice], now, false)).toBeUndefined();
    expect(pickDuplicate(slow, [request(slow, 0, 4 * MiB)], now, false)).toBeUndefined();
    expect(pickDuplicate(idle, [request(slow, 0, 4 * MiB, { kind: 'probe' })], now, false)).toBeUndefined();
  });

  it('leaves the primary alone while its first bytes are the reference', () => {
    const primary = mirror('primary', { rate: 100 * 1024, inFlight: 1, primary: true });
    const fast = mirror('fast', { rate: 8 * MiB });
    const first = request(primary, 0, 1 * MiB, { pos: 1 });
    expect(pickDuplicate(fast, [first], now, true)).toBeUndefined();
    expect(pickDuplicate(fast, [first], now, false)).toBe(first);
  });

  it('takes the block with the largest gain', () => {
    const slow = mirror('slow', { rate: 1 * MiB, inFlight: 2 });
    const fast = mirror('fast', { rate: 16 * MiB });
    const small = request(slow, 0, 1 * MiB, { pos: 1 });
    const big = request(slow, 1 * MiB, 5 * MiB, { pos: 1 * MiB + 1 });
    expect(pickDuplicate(fast, [small, big], now, false)).toBe(big);
  });

  it('a request still waiting for its first byte has its round trip to go', () => {
    const far = mirror('far', { rate: 4 * MiB, inFlight: 1, rttMs: 2000 });
    const near = mirror('near', { rate: 2 * MiB, rttMs: 10 });
    // Issued just now: 2 s until its first byte, then 0.25 s; the near mirror needs 0.5 s.
    const waiting = request(far, 0, 1 * MiB, { issuedAt: now });
    expect(pickDuplicate(near, [waiting], now, false)).toBe(waiting);
  });
});
