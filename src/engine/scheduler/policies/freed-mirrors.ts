import type { Plan } from '../loop/plan';
import type { Playback } from './views';

/**
 * Mirrors whose far requests streaming priority cut for a player's byte: they take no far block
 * until that byte is stored, or no player wants it any more (a seek away, the player gone).
 * Without this memory, a wrong "free this mirror" verdict becomes a livelock: the far blocks cut
 * on one pump are taken again on the next, then cut again, thousands of times a second.
 */
export class FreedMirrors<M> {
  /** Each held mirror and the byte it was freed for. */
  private readonly held = new Map<M, number>();

  /** `mirrors` were freed (their far requests cut) for byte `at`. */
  freed(mirrors: Iterable<M>, at: number): void {
    for (const mirror of mirrors) this.held.set(mirror, at);
  }

  /** The mirrors still held: the byte each was freed for is missing and inside a player's window. */
  stillHeld(plan: Pick<Plan, 'firstMissing'>, players: readonly Playback[]): Set<M> {
    for (const [mirror, at] of this.held) {
      const wanted = players.some((p) => p.position <= at && at < p.position + p.aheadBytes);
      if (!wanted || plan.firstMissing(at) > at) this.held.delete(mirror);
    }
    return new Set(this.held.keys());
  }
}
