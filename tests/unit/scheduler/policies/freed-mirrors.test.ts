import { describe, expect, it } from 'vitest';
import { FreedMirrors } from '../../../../src/engine/scheduler/policies/freed-mirrors';
import { Plan } from '../../../../src/engine/scheduler/loop/plan';
import { MiB } from '../views';

const SIZE = 64 * MiB;
const seekTo = (position: number) => [{ position, aheadBytes: 2 * MiB }];

describe('mirrors freed for a player', () => {
  it('stay held while the byte they were freed for is missing, claimed or not', () => {
    const freed = new FreedMirrors<string>();
    freed.freed(['a', 'b'], 40 * MiB);
    // Asked for elsewhere, or already received and being stored: still not stored, still held.
    expect(freed.stillHeld(new Plan(SIZE, []), seekTo(40 * MiB))).toEqual(new Set(['a', 'b']));
    expect(freed.stillHeld(new Plan(SIZE, [{ start: 0, end: 40 * MiB }]), seekTo(40 * MiB))).toEqual(new Set(['a', 'b']));
  });

  it('are let go once the byte is stored', () => {
    const freed = new FreedMirrors<string>();
    freed.freed(['a'], 40 * MiB);
    expect(freed.stillHeld(new Plan(SIZE, [{ start: 40 * MiB, end: 40 * MiB + 1 }]), seekTo(40 * MiB))).toEqual(new Set());
    // Once let go, for good: the same byte missing again (bytes replaced) needs a new verdict.
    expect(freed.stillHeld(new Plan(SIZE, []), seekTo(40 * MiB))).toEqual(new Set());
  });

  it('are let go when no player wants the byte: a seek away, or the player gone', () => {
    const freed = new FreedMirrors<string>();
    freed.freed(['a'], 40 * MiB);
    freed.freed(['b'], 50 * MiB);
    // Another player still wants 50 MiB.
    expect(freed.stillHeld(new Plan(SIZE, []), [...seekTo(10 * MiB), ...seekTo(49 * MiB)])).toEqual(new Set(['b']));
    expect(freed.stillHeld(new Plan(SIZE, []), [])).toEqual(new Set());
  });

  it('a mirror freed again is held for the newer byte', () => {
    const freed = new FreedMirrors<string>();
    freed.freed(['a'], 40 * MiB);
    freed.freed(['a'], 20 * MiB);
    expect(freed.stillHeld(new Plan(SIZE, []), seekTo(20 * MiB))).toEqual(new Set(['a']));
  });
});
