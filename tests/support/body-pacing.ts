import type { CongestionWindow } from './congestion-window';
import { CONTENT_CHUNK } from './content';
import type { TokenBucket } from './token-bucket';

/**
 * How a test server paces one response's body: the server's rate shared by its connections, the
 * connection's own rate and TCP window (congestion-window.ts), and the client's link. The loopback
 * mirror (real time) and the simulated network (virtual time) both send through it, so both emulate
 * the same path.
 */
export class BodyPacing {
  private readonly buckets: TokenBucket[];

  constructor(
    buckets: (TokenBucket | undefined)[],
    private readonly window: CongestionWindow | undefined,
    private readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    this.buckets = buckets.filter((bucket) => bucket !== undefined);
  }

  /**
   * Waits until some of `wanted` bytes may be sent and says how many (the caller sends them now);
   * 0 as soon as `stopped()` says the response ended or went silent meanwhile.
   */
  async take(wanted: number, stopped: () => boolean): Promise<number> {
    for (;;) {
      if (stopped()) return 0;
      const room = this.window?.room(this.now());
      if (room?.bytes === 0) {
        await this.sleep(room.waitMs);
        continue;
      }
      const n = Math.min(this.maxPiece(), wanted, room?.bytes ?? Infinity);
      const wait = Math.max(0, ...this.buckets.map((bucket) => bucket.reserve(n)));
      if (wait > 0) {
        await this.sleep(wait);
        if (stopped()) return 0;
      }
      this.window?.sent(n, this.now());
      return n;
    }
  }

  /** Pieces of at most 10 ms at the slowest rate, so that the rates hold at a fine grain. */
  private maxPiece(): number {
    const rates = this.buckets.map((bucket) => bucket.rate).filter((rate) => rate !== undefined);
    return rates.length === 0 ? CONTENT_CHUNK : Math.max(1, Math.min(CONTENT_CHUNK, Math.floor(Math.min(...rates) / 100)));
  }
}
