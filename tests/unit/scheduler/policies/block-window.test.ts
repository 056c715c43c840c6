import { describe, expect, it } from 'vitest';
import { BlockWindow, requestRoom } from '../../../../src/engine/scheduler/policies/block-window';
import { MiB } from '../views';

describe('block window (CoBlitz)', () => {
  it('grows by 1/log(w) per fast block', () => {
    const w = new BlockWindow(3, 100);
    w.fastBlock();
    expect(w.value).toBeCloseTo(3 + 1 / Math.log(3));
    const before = w.value;
    w.fastBlock();
    expect(w.value).toBeCloseTo(before + 1 / Math.log(before));
  });

  it('grows by one from a window of one (log 1 = 0), never past its maximum', () => {
    const w = new BlockWindow(1, 4);
    w.fastBlock();
    expect(w.value).toBe(2);
    for (let i = 0; i < 50; i++) w.fastBlock();
    expect(w.value).toBe(4);
  });

  it('shrinks by one per missed deadline, never below one', () => {
    const w = new BlockWindow(5, 10);
    w.deadlineMissed();
    expect(w.value).toBe(4);
    for (let i = 0; i < 10; i++) w.deadlineMissed();
    expect(w.value).toBe(1);
    expect(w.allows(0)).toBe(true);
    expect(w.allows(1)).toBe(false);
  });

  it('allows as many requests as its whole part', () => {
    const w = new BlockWindow(3.9, 10);
    expect(w.allows(2)).toBe(true);
    expect(w.allows(3)).toBe(false);
  });

  it('starts at one request per connection of each mirror in use plus one, bounded by memory', () => {
    expect(BlockWindow.forDownload(3, 8, 2, 96 * MiB, 4 * MiB).value).toBe(7);
    // Ten mirrors but only eight in use at once.
    expect(BlockWindow.forDownload(10, 8, 2, 96 * MiB, 4 * MiB).value).toBe(17);
    // 8 MiB of buffer and 4 MiB records: two requests at most.
    expect(BlockWindow.forDownload(3, 8, 2, 8 * MiB, 4 * MiB).value).toBe(2);
  });
});

describe('request room', () => {
  const load = (wanted: number, onWire: number) => ({ wanted, onWire });

  it('is what the block window leaves, or what the connection counts ask for when that is more, within memory', () => {
    expect(requestRoom(9, 100, [load(2, 2), load(2, 1)])).toBe(6);
    expect(requestRoom(9, 100, [load(8, 5), load(4, 4)])).toBe(3);
    expect(requestRoom(9.7, 100, [load(1, 1)])).toBe(8);
    expect(requestRoom(9, 10, [load(8, 5), load(4, 4)])).toBe(1);
    expect(requestRoom(9, 8, [load(8, 5), load(4, 4)])).toBe(0);
  });

  it("leaves a mirror's free connection its room while another mirror has more requests than its count now asks for", () => {
    // A far mirror uses 7 of its 8; three near ones just went from 4 connections to 3, their 4th requests still on the wire.
    expect(requestRoom(9, 384, [load(8, 7), load(3, 4), load(3, 4), load(3, 4)])).toBe(1);
    // A mirror waiting out a refusal asks for none: its requests still on the wire take nobody's room.
    expect(requestRoom(9, 384, [load(8, 6), load(0, 3)])).toBe(2);
  });
});
