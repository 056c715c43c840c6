import { describe, expect, it } from 'vitest';
import { ElementReads } from '../../../src/background/playback/element-reads';

const KiB = 1024;
const MiB = 1024 * KiB;

describe("a media element's reads: which one says where it plays", () => {
  it('a seek leads; a re-read of the old position asked after it does not pull the player back', () => {
    // What Chrome did in the playback benchmark (16 MB clip): it played from 0, then on a seek to
    // 80 % read the index at the end, then asked again from where it had been, and at the target.
    const reads = new ElementReads();
    const first = reads.open(0);
    first.pos = 393_216;
    const index = reads.open(16_384_000);
    expect(reads.leads(index)).toBe(true);
    expect(reads.close(first, 0)).toBeUndefined();
    reads.close(index, 0);
    const target = reads.open(12_976_128);
    const again = reads.open(393_216);
    expect(reads.leads(target)).toBe(true);
    expect(reads.leads(again)).toBe(false);
    // The target's read stops (cancelled): the element reads on only at its old position, which leads now.
    expect(reads.close(target, 0)).toBe(again);
    expect(reads.leads(again)).toBe(true);
  });

  it('a read going on from where the leading one got to takes its place; the newest seek leads', () => {
    const reads = new ElementReads();
    const seek = reads.open(5 * MiB);
    seek.pos = 6 * MiB;
    const on = reads.open(6 * MiB - 32 * KiB);
    expect(reads.leads(on)).toBe(true);
    expect(reads.leads(seek)).toBe(false);
    const back = reads.open(1 * MiB);
    expect(reads.leads(back)).toBe(true);
    // Closing a read that does not lead changes nothing.
    expect(reads.close(on, 0)).toBeUndefined();
    expect(reads.idleSince).toBeUndefined();
    expect(reads.close(back, 5)).toBe(seek);
    reads.close(seek, 7);
    expect(reads.idleSince).toBe(7);
  });

  it('remembers only the last few stopped reads', () => {
    const reads = new ElementReads();
    const old = reads.open(0);
    old.pos = 100 * KiB;
    reads.close(old, 0);
    for (let i = 1; i <= 8; i++) reads.close(reads.open(i * 10 * MiB), 0);
    // The first read's stop is forgotten: a request there is a seek, above every earlier read.
    const live = reads.open(90 * MiB);
    const there = reads.open(100 * KiB);
    expect(reads.leads(there)).toBe(true);
    expect(reads.leads(live)).toBe(false);
  });
});
