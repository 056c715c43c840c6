import type { Decision } from './decisions';
import { freshRequestMs, type MirrorView, type RequestView } from './views';

/** A request that received nothing for this long when its deadline passed is stalling. */
export const SILENT_MS = 1000;

/**
 * Per-block deadlines (CoBlitz): a block may take `bound` times its expected duration, where
 * `bound` follows an EWMA plus four deviations of how late recent blocks were. Before any
 * sample, the first-block deadline applies; each re-request of the same bytes doubles it.
 */
export class DeadlineEstimator {
  private mean: number | undefined;
  private deviation = 0;

  constructor(
    private readonly firstMs = 3000,
    private readonly capMs = 10_000,
  ) {}

  /** Records a finished block: actual over expected duration. True when it beat the average so far. */
  observe(actualMs: number, expectedMs: number): boolean {
    if (!(expectedMs > 0)) return false;
    const ratio = actualMs / expectedMs;
    if (this.mean === undefined) {
      this.mean = ratio;
      this.deviation = ratio / 2;
      return false;
    }
    const fast = ratio < this.mean;
    this.deviation = 0.75 * this.deviation + 0.25 * Math.abs(ratio - this.mean);
    this.mean = 0.875 * this.mean + 0.125 * ratio;
    return fast;
  }

  /** Average lateness ratio so far (1 = as expected), or undefined before any sample. */
  averageRatio(): number | undefined {
    return this.mean;
  }

  /** How long a block expected to take `expectedMs` may run; `attempt` 0 for the first request. */
  timeoutMs(expectedMs: number | undefined, attempt: number): number {
    const backoff = 2 ** Math.min(attempt, 10);
    if (expectedMs === undefined || this.mean === undefined) return Math.min(this.firstMs * backoff, this.capMs * backoff);
    const bound = Math.min(6, Math.max(1.5, this.mean + 4 * this.deviation));
    return Math.max(250, expectedMs * bound) * backoff;
  }

  /** The deadline of a request issued at `now`; a player's bytes get half the time. */
  deadline(now: number, expectedMs: number | undefined, attempt: number, urgent: boolean): number {
    return now + this.timeoutMs(expectedMs, attempt) * (urgent ? 0.5 : 1);
  }
}

/** How long `bytes` should take on `mirror` if it took one more request now; undefined before its rate is known. */
export function expectedMs(mirror: MirrorView, bytes: number): number | undefined {
  return mirror.rate() > 0 ? freshRequestMs(mirror, bytes) : undefined;
}

/** How long a mirror is benched after its `misses`-th missed deadline in a row. */
export function benchMs(misses: number): number {
  return Math.min(10_000, 500 * 2 ** (misses - 1));
}

export interface LateContext<M extends MirrorView> {
  now: number;
  mirrors: readonly (M & { readonly deadlineMisses: number })[];
  connections: (mirror: M) => number;
  /** Whether the block window has room for one more request. */
  windowHasRoom: boolean;
}

/**
 * A silent or stalling mirror gets no new block for a while (exponentially longer per miss in
 * a row), so others take its work; alone, a mirror is never benched: nobody could take over.
 */
export function benchSilent<M extends MirrorView & { readonly deadlineMisses: number }>(
  mirror: M,
  context: Pick<LateContext<M>, 'now' | 'mirrors'>,
): Decision<M, never> | undefined {
  if (!context.mirrors.some((m) => m !== mirror && m.usable(context.now))) return undefined;
  const misses = mirror.deadlineMisses + 1;
  return { kind: 'bench', mirror, misses, until: context.now + benchMs(misses) };
}

/**
 * What to do about a request past its deadline (CoBlitz): a silent mirror is benched (a
 * merely slow one keeps its smaller share); the rest of the block is re-requested on the
 * other mirror expected to finish it first, never on the same mirror and never a third copy.
 */
export function lateDecisions<M extends MirrorView & { readonly deadlineMisses: number }, R extends RequestView & { mirror: M }>(
  request: R,
  context: LateContext<M>,
): Decision<M, R>[] {
  const { now } = context;
  const decisions: Decision<M, R>[] = [];
  const bench = now - request.lastByteAt > SILENT_MS ? benchSilent(request.mirror, context) : undefined;
  if (bench) decisions.push(bench);
  const remaining = request.group.end - request.pos;
  // A block that received every byte may still wait on the disk: nothing is left to hedge.
  if (remaining <= 0 || request.group.fetches.size >= 2 || !context.windowHasRoom) return decisions;
  const target = context.mirrors
    .filter((m) => m !== request.mirror && m.usable(now) && m.inFlight <= context.connections(m))
    .sort((a, b) => freshRequestMs(a, remaining) - freshRequestMs(b, remaining))[0];
  if (target) decisions.push({ kind: 'duplicate', mirror: target, of: request });
  return decisions;
}
