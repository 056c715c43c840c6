/**
 * Whether a new connection closed before any header was the server refusing one more, or part of a reset.
 * Pure: the caller passes the time. Alone, a close before answering while others are open is a refusal;
 * with other requests of the same server breaking at the same moment, a reset (or an outage), which says
 * nothing about how many connections the server allows. A reset also when the only body on the way broke:
 * whatever carried the server's rate is gone, and the connections that replace it start in slow start.
 */

/** Requests of one server that break within this much of each other broke together. */
export const TOGETHER_MS = 100;

export class RefusalOrReset {
  /** When its requests last broke (before or during a body), newest last. */
  private breaks: number[] = [];
  private closed: { at: number; working: number } | undefined;
  /** When a reset was last reported. */
  private resetAt = -Infinity;

  /**
   * A request broke: before its headers or mid-body (`lastBody`: mid-body, and no other body of the server was on
   * its way). True once per reset: when another broke with it, or it was the last body.
   */
  broke(now: number, lastBody = false): boolean {
    const last = this.breaks.at(-1);
    this.breaks.push(now);
    if (this.breaks.length > 16) this.breaks.shift();
    const together = last !== undefined && now - last <= TOGETHER_MS;
    if (!(together || lastBody) || now - this.resetAt <= TOGETHER_MS) return false;
    this.resetAt = now;
    return true;
  }

  /** A new connection was closed before any header while `working` others were open; judged once that moment is past. */
  closedBeforeAnswering(now: number, working: number): void {
    this.closed ??= { at: now, working };
  }

  /** Once the moment is past: the connections that were working if it was a refusal, else undefined. */
  refusal(now: number): number | undefined {
    const closed = this.closed;
    if (!closed || now - closed.at <= TOGETHER_MS) return undefined;
    this.closed = undefined;
    const together = this.breaks.filter((at) => Math.abs(at - closed.at) <= TOGETHER_MS).length;
    return together <= 1 ? closed.working : undefined;
  }
}
