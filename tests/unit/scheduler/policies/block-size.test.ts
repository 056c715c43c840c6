import { describe, expect, it } from 'vitest';
import { blockBytes, INITIAL_BLOCK } from '../../../../src/engine/scheduler/policies/block-size';
import { KiB, MiB, mirror } from '../views';

const base = {
  blockSeconds: 1,
  minBlockBytes: 128 * KiB,
  maxBlockBytes: 16 * MiB,
  connections: 2,
  unclaimedBytes: 1024 * MiB,
  inFlightBytes: 0,
  busyMirrors: 1,
  totalRate: 0,
  playback: undefined,
};

describe('block size', () => {
  it('lasts about a second at the mirror rate share per connection', () => {
    expect(blockBytes(mirror('m', { rate: 8 * MiB }), base)).toBe(4 * MiB);
  });

  it('lasts at least eight round trips on a far mirror, and two even at the end', () => {
    // 4 MiB/s per connection at 250 ms: 8 round trips are 2 s; near the end, 2 are 0.5 s.
    const far = mirror('m', { rate: 8 * MiB, rttMs: 250 });
    expect(blockBytes(far, base)).toBe(8 * MiB);
    expect(blockBytes(far, { ...base, unclaimedBytes: 2 * MiB })).toBe(2 * MiB);
  });

  it('on a far mirror, ends with the rest: its round trip and body within the time the rest takes at every mirror', () => {
    // 4 MiB/s per connection at 250 ms; 24 MiB left at 32 MiB/s take 750 ms: 500 ms of body after the round trip.
    const far = mirror('m', { rate: 8 * MiB, rttMs: 250 });
    const shared = { ...base, busyMirrors: 4, totalRate: 32 * MiB };
    expect(blockBytes(far, { ...shared, unclaimedBytes: 24 * MiB })).toBe(2 * MiB);
    // The rest is shorter than its round trip: the smallest block…
    expect(blockBytes(far, { ...shared, unclaimedBytes: 4 * MiB })).toBe(128 * KiB);
    // …unless it is alone: nobody waits for it, and each block costs a round trip.
    expect(blockBytes(far, { ...shared, unclaimedBytes: 4 * MiB, busyMirrors: 1, totalRate: 8 * MiB })).toBe(2 * MiB);
  });

  it('sizes blocks by the rate while sending where requests mostly wait for their headers, counted up to 4 times the rate', () => {
    // 1 MiB/s per connection measured, half of it spent waiting: 2 MiB/s while sending, over 8 round trips of 300 ms.
    const far = (waitShare: number) => mirror('m', { rate: 2 * MiB, rttMs: 300, waitShare });
    expect(blockBytes(far(0), base)).toBe(2.4 * MiB);
    expect(blockBytes(far(0.5), base)).toBe(4.8 * MiB);
    expect(blockBytes(far(0.99), base)).toBe(9.6 * MiB);
    // Near the end too: half the time the rest takes, in time sending.
    const end = { ...base, unclaimedBytes: 16 * MiB, totalRate: 16 * MiB };
    expect(blockBytes(far(0), end)).toBe(0.6 * MiB);
    expect(blockBytes(far(0.5), end)).toBe(1.2 * MiB);
  });

  it("near the end, a slow mirror's block ends with all the work left, under the smallest block if need be", () => {
    // 1 MiB/s per connection, 20 ms away; 1 MiB in flight and 0.5 MiB unrequested take 100 ms at 15 MiB/s: 80 ms of body.
    const slow = mirror('m', { rate: 2 * MiB, rttMs: 20 });
    const end = { ...base, busyMirrors: 4, totalRate: 15 * MiB, unclaimedBytes: 0.5 * MiB, inFlightBytes: 1 * MiB };
    expect(blockBytes(slow, end)).toBeCloseTo(0.08 * MiB, 0);
    // Without what requests in flight bring, the work left is shorter than its round trip: a round trip's worth of body.
    expect(blockBytes(slow, { ...end, inFlightBytes: 0 })).toBeCloseTo(0.02 * MiB, 0);
  });

  it('starts at a fixed size before the rate is known', () => {
    expect(blockBytes(mirror('m'), base)).toBe(INITIAL_BLOCK);
  });

  it('shrinks near the end so the last blocks finish together', () => {
    const m = mirror('m', { rate: 8 * MiB });
    expect(blockBytes(m, { ...base, unclaimedBytes: 4 * MiB, busyMirrors: 2 })).toBe(1 * MiB);
    expect(blockBytes(m, { ...base, unclaimedBytes: 100 * KiB })).toBe(128 * KiB);
  });

  it('near the end, lasts at most half the time the rest takes at every mirror, so capped connections end together', () => {
    // 16 connections at 1 MiB/s each; 8 MiB left is half a second at the 16 MiB/s of all of them.
    const capped = mirror('m', { rate: 16 * MiB });
    const context = { ...base, connections: 16, unclaimedBytes: 8 * MiB, totalRate: 16 * MiB };
    expect(blockBytes(capped, context)).toBe(256 * KiB);
    // Far from the end, about a second.
    expect(blockBytes(capped, { ...context, unclaimedBytes: 64 * MiB })).toBe(1 * MiB);
  });

  it('stays within the bounds, and under half the player window while one is attached', () => {
    expect(blockBytes(mirror('m', { rate: 1000 * MiB }), base)).toBe(16 * MiB);
    expect(blockBytes(mirror('m', { rate: 8 * MiB }), { ...base, playback: { position: 0, aheadBytes: 2 * MiB } })).toBe(1 * MiB);
  });
});
