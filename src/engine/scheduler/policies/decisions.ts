import type { MirrorView, RequestView } from './views';

/** What a policy asks the scheduler's loop to do; policies never change state themselves. */
export type Decision<M extends MirrorView = MirrorView, R extends RequestView = RequestView> =
  /** A new request for [start, end) on `mirror`. */
  | { kind: 'issue'; mirror: M; start: number; end: number; urgent?: boolean }
  /** Another copy of the rest of `of`, on `mirror`; the first copy to arrive wins. */
  | { kind: 'duplicate'; mirror: M; of: R }
  /** End `request` (and its copies) at byte `at`: a fresh request brings the bytes from there sooner. */
  | { kind: 'split'; request: R; at: number }
  /** Cut `request` where it is: what it received is stored, its rest goes back to the pool. */
  | { kind: 'cut'; request: R }
  /** Store what `request` receives in small records, so a player can use it at once. */
  | { kind: 'stream'; request: R }
  /** Give `mirror` no new block until `until` (its `misses`-th missed deadline in a row): others take its work. */
  | { kind: 'bench'; mirror: M; misses: number; until: number };
