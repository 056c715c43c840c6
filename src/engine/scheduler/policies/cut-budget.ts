/**
 * How many of one mirror's requests the scheduler may cut within CUT_WINDOW_MS: a seek cuts at most
 * a mirror's six connections (a browser's), so four seeks a second are never held back.
 */
export const MAX_CUTS_PER_MIRROR = 24;
const CUT_WINDOW_MS = 1000;

/**
 * Whether the scheduler may cut one more of a mirror's requests now. A cut hands a request's
 * bandwidth to bytes needed sooner (a seek, the lead of a player's window); two rules that
 * disagree on when a request ends send and cut requests in turn, thousands a second, and a
 * browser's extension process grew to 7.5 GB in minutes that way (a throw-away build of
 * session 24; three such loops were fixed at their cause before). Past this budget a cut waits
 * and the request goes on, so such a bug makes a download slower, not endless.
 */
export class CutBudget<M> {
  /** Each mirror's recent cuts (times, oldest first). */
  private readonly cuts = new Map<M, number[]>();

  /** True, and counted, when one more of `mirror`'s requests may be cut at `now`. */
  take(mirror: M, now: number): boolean {
    for (const [m, times] of this.cuts) {
      while (times.length > 0 && now - times[0]! >= CUT_WINDOW_MS) times.shift();
      if (times.length === 0) this.cuts.delete(m);
    }
    const recent = this.cuts.get(mirror) ?? [];
    if (recent.length >= MAX_CUTS_PER_MIRROR) return false;
    recent.push(now);
    this.cuts.set(mirror, recent);
    return true;
  }
}
