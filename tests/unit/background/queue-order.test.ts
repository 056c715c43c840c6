import { describe, expect, it } from 'vitest';
import {
  afterUndo,
  allTargets,
  moved,
  placeOf,
  queueOf,
  rankFirst,
  rankForNew,
  storedRank,
  toStart,
  type InLine,
} from '../../../src/background/jobs/queue-order';

/**
 * A list of downloads as the user gave them, with the ranks the policy hands out, and what each
 * one is doing: the queue is the waiting ones.
 */
class Downloads {
  readonly all: (InLine & { state: 'waiting' | 'running' | 'paused' | 'cancelled' })[] = [];
  private last = 0;

  constructor(private now = 1_000) {}

  add(...ids: string[]): this {
    for (const id of ids) {
      this.last = rankForNew(
        this.all.map((d) => d.rank),
        this.last,
        this.now,
      );
      this.all.push({ id, rank: this.last, waiting: true, state: 'waiting' });
    }
    return this;
  }

  set(id: string, state: 'waiting' | 'running' | 'paused' | 'cancelled'): this {
    const d = this.all.find((x) => x.id === id)!;
    d.state = state;
    d.waiting = state === 'waiting';
    return this;
  }

  queue(): string[] {
    return queueOf(this.all);
  }

  /** Starts from the queue's front what the limit lets run. */
  pump(limit: number): string[] {
    const running = this.all.filter((d) => d.state === 'running').length;
    const started = toStart(this.queue(), running, limit);
    for (const id of started) this.set(id, 'running');
    return started;
  }

  move(id: string, direction: 'up' | 'down'): this {
    for (const [of, rank] of moved(this.all, id, direction) ?? []) this.all.find((d) => d.id === of)!.rank = rank;
    return this;
  }

  startNow(id: string): this {
    const d = this.all.find((x) => x.id === id)!;
    d.rank = rankFirst(
      this.all.filter((x) => x !== d).map((x) => x.rank),
      d.rank,
    );
    return this.set(id, 'running');
  }
}

describe('the queue: first in, first out in the order the user gave', () => {
  it('ten downloads given at once wait in the order given, and start from the front as slots free', () => {
    // All ten in one millisecond: each still ranks after the one before.
    const q = new Downloads().add('d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10');
    expect(q.pump(2)).toEqual(['d1', 'd2']);
    expect(q.queue()).toEqual(['d3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10']);
    expect(placeOf(q.all, 'd3')).toEqual({ position: 1, of: 8 });
    expect(placeOf(q.all, 'd10')).toEqual({ position: 8, of: 8 });
    expect(placeOf(q.all, 'd1')).toBeUndefined(); // running: no place
    q.set('d1', 'paused'); // a slot frees: the third given starts, not the newest
    expect(q.pump(2)).toEqual(['d3']);
    expect(q.pump(2)).toEqual([]);
  });

  it('a new download ranks after every other, whatever the clock says', () => {
    expect(rankForNew([5, 9], 0, 3)).toBe(10);
    expect(rankForNew([], 0, 1_000)).toBe(1_000);
    expect(rankForNew([], 1_000, 1_000)).toBe(1_001); // two in one millisecond
    expect(rankForNew([2_000], 1_000, 1_500)).toBe(2_001);
  });

  it('a download stored before ranks were kept ranks by when it was made, and a stored rank survives a restart', () => {
    expect(storedRank({ createdAt: 1_700 })).toBe(1_700);
    expect(storedRank({ order: 12, createdAt: 1_700 })).toBe(12);
    // Read again after a restart: the same ranks give the same queue.
    const q = new Downloads().add('a', 'b', 'c');
    q.move('c', 'up');
    const restarted = q.all.map((d) => ({ id: d.id, rank: storedRank({ order: d.rank, createdAt: 0 }), waiting: true }));
    expect(queueOf(restarted)).toEqual(['a', 'c', 'b']);
  });

  it('equal ranks are ordered by id, the same every time', () => {
    const same = [
      { id: 'b', rank: 1, waiting: true },
      { id: 'a', rank: 1, waiting: true },
    ];
    expect(queueOf(same)).toEqual(['a', 'b']);
    expect(queueOf([...same].reverse())).toEqual(['a', 'b']);
    expect(placeOf(same, 'b')).toEqual({ position: 2, of: 2 });
  });
});

describe('the queue: the user reorders it', () => {
  it('Move up and Move down trade places with the neighbour in the queue', () => {
    const q = new Downloads().add('a', 'b', 'c', 'd');
    q.move('c', 'up');
    expect(q.queue()).toEqual(['a', 'c', 'b', 'd']);
    q.move('c', 'up');
    expect(q.queue()).toEqual(['c', 'a', 'b', 'd']);
    q.move('a', 'down').move('a', 'down');
    expect(q.queue()).toEqual(['c', 'b', 'd', 'a']);
  });

  it('at either end a move changes nothing; a download that does not wait cannot move', () => {
    const q = new Downloads().add('a', 'b');
    expect(moved(q.all, 'a', 'up')).toEqual(new Map());
    expect(moved(q.all, 'b', 'down')).toEqual(new Map());
    q.set('a', 'running');
    expect(moved(q.all, 'a', 'down')).toBeUndefined();
  });

  it('a move skips downloads that do not wait (paused ones keep their ranks)', () => {
    const q = new Downloads().add('a', 'b', 'c').set('b', 'paused');
    q.move('c', 'up');
    expect(q.queue()).toEqual(['c', 'a']);
    expect(q.all.find((d) => d.id === 'b')!.rank).toBe(1_001);
  });

  it('equal ranks: a move still moves', () => {
    const all = [
      { id: 'a', rank: 1, waiting: true },
      { id: 'b', rank: 1, waiting: true },
    ];
    const ranks = moved(all, 'b', 'up')!;
    const after = all.map((d) => ({ ...d, rank: ranks.get(d.id) ?? d.rank }));
    expect(queueOf(after)).toEqual(['b', 'a']);
  });

  it('Start now runs a download at once and ranks it before every other', () => {
    const q = new Downloads().add('a', 'b', 'c', 'd');
    q.pump(1);
    q.startNow('d');
    expect(q.queue()).toEqual(['b', 'c']);
    // Paused and resumed later, it waits first: the user wanted it first.
    q.set('d', 'paused').set('d', 'waiting');
    expect(q.queue()).toEqual(['d', 'b', 'c']);
    expect(rankFirst([5, 7], 3)).toBe(3); // already first: kept
    expect(rankFirst([3, 7], 3)).toBe(2); // a tie is no first place
  });
});

describe('the queue: pausing and undoing keep a download’s place', () => {
  it('a queued download paused for a moment and resumed is back at its place, not at the end', () => {
    const q = new Downloads().add('d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10');
    q.pump(2);
    expect(placeOf(q.all, 'd5')).toEqual({ position: 3, of: 8 });
    q.set('d5', 'paused');
    expect(q.queue()).not.toContain('d5');
    expect(placeOf(q.all, 'd6')).toEqual({ position: 3, of: 7 });
    q.set('d5', 'waiting');
    expect(placeOf(q.all, 'd5')).toEqual({ position: 3, of: 8 });
  });

  it('a running download paused and resumed waits first: it was given before every queued one', () => {
    const q = new Downloads().add('a', 'b', 'c', 'd');
    q.pump(2);
    q.set('a', 'paused');
    expect(q.pump(2)).toEqual(['c']);
    q.set('a', 'waiting');
    expect(q.queue()).toEqual(['a', 'd']);
  });

  it('Cancel and Undo put a queued download back at its place, the first one first', () => {
    const q = new Downloads().add('a', 'b', 'c', 'd', 'e');
    q.pump(2);
    q.set('c', 'cancelled');
    expect(q.queue()).toEqual(['d', 'e']);
    const { start, wait } = afterUndo([{ id: 'c', running: false }]);
    expect(start).toEqual([]);
    for (const id of wait) q.set(id, 'waiting');
    expect(q.queue()).toEqual(['c', 'd', 'e']);
    expect(placeOf(q.all, 'c')).toEqual({ position: 1, of: 3 });
  });

  it('Cancel all and its one Undo: the running ones run again, the queued ones wait at their places', () => {
    const q = new Downloads().add('d1', 'd2', 'd3', 'd4', 'd5', 'd6');
    q.pump(2);
    q.move('d6', 'up'); // the user's own order, kept through it all
    const before = q.queue();
    const was = q.all.map((d) => ({ id: d.id, running: d.state === 'running' }));
    for (const d of q.all) q.set(d.id, 'cancelled');
    expect(q.queue()).toEqual([]);

    const { start, wait } = afterUndo(was);
    expect(start).toEqual(['d1', 'd2']);
    for (const id of start) q.set(id, 'running');
    for (const id of wait) q.set(id, 'waiting');
    expect(q.pump(2)).toEqual([]); // the slots are theirs again: nothing jumps in
    expect(q.queue()).toEqual(before);
    expect(before).toEqual(['d3', 'd4', 'd6', 'd5']);
  });

  it('a free slot starts only the queue’s front; none past the limit', () => {
    expect(toStart(['a', 'b', 'c'], 0, 2)).toEqual(['a', 'b']);
    expect(toStart(['a', 'b'], 3, 2)).toEqual([]); // Start now ran one past the limit
  });
});

describe('actions on all downloads', () => {
  const downloads = [
    { id: 'run', state: 'running', cancelled: false },
    { id: 'wait', state: 'queued', cancelled: false },
    { id: 'held', state: 'paused', cancelled: false },
    { id: 'bad', state: 'failed', cancelled: false },
    { id: 'done', state: 'saved', cancelled: false },
    { id: 'gone', state: 'paused', cancelled: true },
  ];

  it('each applies to the downloads it makes sense for; a cancelled one only comes back by Undo', () => {
    expect(allTargets('pause', downloads)).toEqual(['run', 'wait']);
    expect(allTargets('resume', downloads)).toEqual(['held']);
    expect(allTargets('cancel', downloads)).toEqual(['run', 'wait', 'held']);
    expect(allTargets('retry', downloads)).toEqual(['bad']);
    expect(allTargets('start-now', downloads)).toEqual(['wait']);
    expect(allTargets('undo', downloads)).toEqual(['gone']);
  });

  it('with a filter typed, only the downloads shown', () => {
    expect(allTargets('pause', downloads, ['wait', 'done'])).toEqual(['wait']);
    expect(allTargets('cancel', downloads, [])).toEqual([]);
    // One Cancel all's Undo names its downloads: others cancelled on their own stay cancelled.
    expect(allTargets('undo', [...downloads, { id: 'other', state: 'paused', cancelled: true }], ['gone'])).toEqual(['gone']);
  });
});
