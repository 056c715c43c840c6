/**
 * A server's remembered connection limit and the back-off after it refused one more. Pure: the caller
 * passes the time. Nothing new is opened until Retry-After (or an exponential back-off) has passed; the
 * limit is tried again at most once per `limitReprobeMs`, doubling after each refusal, so a server that
 * allows two never sees a storm.
 */

export interface ServerLimitOptions {
  /** Without Retry-After: the first back-off, doubled for each refusal in a row, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Past a server's remembered limit, one try this long after the refusal, doubled after each new one. */
  limitReprobeMs: number;
}

export class ServerLimit {
  /** The connections that were working when the server refused one more (the fewest seen). */
  known: number | undefined;
  private blockedUntil = 0;
  private refusalsInRow = 0;
  private limitRefusals = 0;
  private probeAt = 0;

  constructor(private readonly options: ServerLimitOptions) {}

  /** Whether nothing new may be opened now. */
  blocked(now: number): boolean {
    return now < this.blockedUntil;
  }

  /** A refusal while `working` connections worked; returns how long nothing new is opened. */
  refused(now: number, working: number, retryAfterMs: number | undefined): number {
    const limit = Math.max(1, working);
    this.known = Math.min(limit, this.known ?? limit);
    // Refusals while already backing off (a step opened more than one) count once and do not extend it.
    const { backoffMs, maxBackoffMs, limitReprobeMs } = this.options;
    const inBurst = this.blocked(now);
    if (!inBurst) {
      this.refusalsInRow++;
      this.limitRefusals++;
    }
    const wait = retryAfterMs ?? Math.min(maxBackoffMs, backoffMs * 2 ** (this.refusalsInRow - 1));
    if (!inBurst || retryAfterMs !== undefined) this.blockedUntil = Math.max(this.blockedUntil, now + wait);
    if (!inBurst) this.probeAt = now + Math.max(wait, limitReprobeMs * 2 ** (this.limitRefusals - 1));
    return wait;
  }

  /** The server delivered: its refusals are no longer in a row. */
  delivered(): void {
    this.refusalsInRow = 0;
  }

  /** `count` connections paid: a limit below them is gone. */
  surpassed(count: number): void {
    if (this.known !== undefined && count > this.known) {
      this.known = undefined;
      this.limitRefusals = 0;
    }
  }

  /** The most connections to try now: `max`, and the known limit until it is due for another try. */
  ceiling(now: number, max: number): number {
    if (this.known === undefined) return max;
    return Math.min(max, now >= this.probeAt ? this.known + 1 : this.known);
  }
}
