/**
 * The queue's policy: which waiting download starts next, and where each one waits. Pure: it
 * decides over a snapshot of the downloads and returns ranks to store, never touching a job.
 *
 * Every download has a rank, kept in its meta: the order the user gave. A new download ranks
 * after every other (click order, Add URL order); Move up and Move down swap ranks with the
 * neighbour in the queue; Start now ranks a download before all. Nothing else changes a rank:
 * a download paused and resumed, cancelled and brought back by Undo, or reopened after the worker
 * or browser restarted, waits again at its place. The queue itself is the downloads that wait for
 * a slot, in rank order; a running, paused, held or cancelled one keeps its rank but not a place.
 */

/** One download as the queue sees it. */
export interface InLine {
  id: string;
  /** Its place in the user's order: smaller starts sooner. */
  rank: number;
  /** Wants a slot and has none: not running, paused, held back, cancelled or finished. */
  waiting: boolean;
}

/** A waiting download's place: position 1 starts next, of how many wait. */
export interface QueuePlace {
  position: number;
  of: number;
}

/** The rank stored with a download; downloads stored before ranks were kept rank by when they were made. */
export function storedRank(meta: { order?: number; createdAt: number }): number {
  return meta.order ?? meta.createdAt;
}

/** Which of two starts sooner: the smaller rank, then the smaller id (the same order every time). */
function sooner(a: InLine, b: InLine): number {
  return a.rank - b.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** The waiting downloads' ids in the order they start. */
export function queueOf(downloads: Iterable<InLine>): string[] {
  return [...downloads]
    .filter((d) => d.waiting)
    .sort(sooner)
    .map((d) => d.id);
}

/** A download's place in the queue (undefined when it does not wait), without sorting: one pass. */
export function placeOf(downloads: Iterable<InLine>, id: string): QueuePlace | undefined {
  let own: InLine | undefined;
  const waiting: InLine[] = [];
  for (const d of downloads) {
    if (!d.waiting) continue;
    waiting.push(d);
    if (d.id === id) own = d;
  }
  if (!own) return undefined;
  return { position: 1 + waiting.filter((d) => sooner(d, own) < 0).length, of: waiting.length };
}

/** The downloads to start now: from the queue's front, as many as free slots (none past the limit). */
export function toStart(queue: readonly string[], running: number, limit: number): string[] {
  return queue.slice(0, Math.max(0, limit - running));
}

/**
 * The rank of a download the user just gave: after every download known (`ranks`) and after the
 * last rank given (`last`: two added at once, before either is known, still keep their order).
 * Near the time, so ranks of downloads stored before ranks were kept (their creation times) mix in.
 */
export function rankForNew(ranks: Iterable<number>, last: number, now: number): number {
  let rank = Math.max(now, last + 1);
  for (const r of ranks) rank = Math.max(rank, r + 1);
  return rank;
}

/** The rank of a download the user wants first (Start now): before every other's (`others`). */
export function rankFirst(others: Iterable<number>, own: number): number {
  let lowest = Infinity;
  for (const r of others) lowest = Math.min(lowest, r);
  return lowest <= own ? lowest - 1 : own;
}

/**
 * Move up (`up`: it starts sooner) or down by one place in the queue: the new ranks of the
 * download and of its neighbour there, which trade ranks. Empty at either end; undefined when it
 * does not wait.
 */
export function moved(downloads: Iterable<InLine>, id: string, direction: 'up' | 'down'): Map<string, number> | undefined {
  const all = [...downloads];
  const queue = queueOf(all);
  const at = queue.indexOf(id);
  if (at < 0) return undefined;
  const other = queue[direction === 'up' ? at - 1 : at + 1];
  if (other === undefined) return new Map();
  const rank = (of: string) => all.find((d) => d.id === of)!.rank;
  const [mine, theirs] = [rank(id), rank(other)];
  // Equal ranks (two given in one millisecond, long ago): the id decides, so one step apart will do.
  if (mine === theirs) return new Map([[id, direction === 'up' ? theirs - 0.5 : theirs + 0.5]]);
  return new Map([
    [id, theirs],
    [other, mine],
  ]);
}

/** What an action on all downloads (Pause all, Cancel all…) is, and what a download is for it. */
export type AllAction = 'start-now' | 'pause' | 'resume' | 'cancel' | 'retry' | 'undo';

export interface ForAll {
  id: string;
  /** As the list shows it. */
  state: string;
  /** Cancelled, its Undo not yet expired. */
  cancelled: boolean;
}

const FINISHED = new Set(['saved', 'failed', 'cancelled']);

/**
 * The downloads an action on all of them applies to: only those of `ids` when given (the rows the
 * popup shows under a filter, or the downloads one Cancel all cancelled), and only those the
 * action makes sense for. A cancelled download is brought back by Undo alone.
 */
export function allTargets(action: AllAction, downloads: readonly ForAll[], ids?: readonly string[]): string[] {
  const chosen = ids && new Set(ids);
  return downloads
    .filter((d) => {
      if (chosen && !chosen.has(d.id)) return false;
      if (action === 'undo') return d.cancelled;
      if (d.cancelled) return false;
      switch (action) {
        case 'pause':
          return d.state === 'running' || d.state === 'queued';
        case 'cancel':
          return !FINISHED.has(d.state);
        case 'resume':
          return d.state === 'paused';
        case 'start-now':
          return d.state === 'queued';
        case 'retry':
          return d.state === 'failed';
      }
    })
    .map((d) => d.id);
}

/** What a cancelled download was, for its Undo: whether it ran (it runs again at once, not behind the queue). */
export interface Cancelled {
  id: string;
  running: boolean;
}

/**
 * Undo of a Cancel (or of one Cancel all): the downloads that ran start again at once, whatever
 * started meanwhile; the others wait again at their places (their ranks never changed).
 */
export function afterUndo(cancelled: readonly Cancelled[]): { start: string[]; wait: string[] } {
  return { start: cancelled.filter((c) => c.running).map((c) => c.id), wait: cancelled.filter((c) => !c.running).map((c) => c.id) };
}
