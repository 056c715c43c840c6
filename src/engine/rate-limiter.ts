import { realClock, type Clock } from './clock';
import { sleep } from './retry';

/**
 * A speed limit shared by every stream that holds it (all of a job's connections, or all jobs):
 * a token bucket with a quarter second of burst. Reading slower makes TCP slow the server down,
 * so nothing is buffered beyond what a stream already holds. A limiter with a `shared` one (one
 * download's own limit under the limit for all) lets bytes pass only when both would.
 */
export class RateLimiter {
  private tokens = 0;
  private last: number;
  /** Takes under way that wait (on this limit or the shared one). */
  private waiting = 0;

  constructor(
    private bytesPerSecond: number | null = null,
    private readonly shared?: RateLimiter,
    private readonly clock: Clock = realClock,
  ) {
    this.last = clock.now();
  }

  /** `null` lifts the limit. */
  setRate(bytesPerSecond: number | null): void {
    this.bytesPerSecond = bytesPerSecond;
  }

  get rate(): number | null {
    return this.bytesPerSecond;
  }

  /** A reader waits on the limit now: its silence is the limit's doing, not the server's. */
  get holding(): boolean {
    return this.waiting > 0;
  }

  /** Waits until `bytes` may pass; resolves at once without a limit. */
  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    this.waiting++;
    try {
      await this.takeOwn(bytes, signal);
      await this.shared?.take(bytes, signal);
    } finally {
      this.waiting--;
    }
  }

  private async takeOwn(bytes: number, signal?: AbortSignal): Promise<void> {
    const rate = this.bytesPerSecond;
    if (rate === null || rate <= 0) return;
    const now = this.clock.now();
    this.tokens = Math.min(rate / 4, this.tokens + ((now - this.last) * rate) / 1000) - bytes;
    this.last = now;
    // In debt: wait until the debt is paid. Callers queue fairly because each adds its debt.
    if (this.tokens < 0) await sleep(this.clock, (-this.tokens * 1000) / rate, signal);
  }
}
