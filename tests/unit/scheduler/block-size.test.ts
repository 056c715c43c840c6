import { describe, expect, it } from 'vitest';
import { blockBytes, INITIAL_BLOCK } from '../../../src/engine/scheduler/block-size';
import { KiB, MiB, mirror } from './views';

const base = {
  blockSeconds: 1,
  minBlockBytes: 128 * KiB,
  maxBlockBytes: 16 * MiB,
  connections: 2,
  unclaimedBytes: 1024 * MiB,
  busyMirrors: 1,
  playback: undefined,
};

describe('block size', () => {
  it('lasts about a second at the mirror rate share per connection', () => {
    expect(blockBytes(mirror('m', { rate: 8 * MiB }), base)).toBe(4 * MiB);
  });

  it('lasts at least four round trips on a far mirror', () => {
    expect(blockBytes(mirror('m', { rate: 8 * MiB, rttMs: 500 }), base)).toBe(8 * MiB);
  });

  it('starts at a fixed size before the rate is known', () => {
    expect(blockBytes(mirror('m'), base)).toBe(INITIAL_BLOCK);
  });

  it('shrinks near the end so the last blocks finish together', () => {
    const m = mirror('m', { rate: 8 * MiB });
    expect(blockBytes(m, { ...base, unclaimedBytes: 4 * MiB, busyMirrors: 2 })).toBe(1 * MiB);
    expect(blockBytes(m, { ...base, unclaimedBytes: 100 * KiB })).toBe(128 * KiB);
  });

  it('stays within the bounds, and under half the player window while one is attached', () => {
    expect(blockBytes(mirror('m', { rate: 1000 * MiB }), base)).toBe(16 * MiB);
    expect(blockBytes(mirror('m', { rate: 8 * MiB }), { ...base, playback: { position: 0, aheadBytes: 2 * MiB } })).toBe(1 * MiB);
  });
});
