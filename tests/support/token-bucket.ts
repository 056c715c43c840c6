/**
 * A byte-rate limiter that lets its balance go negative: `reserve(n)` takes n bytes at once and
 * says how long the caller must wait before sending them. Concurrent callers queue up behind each
 * other's debt, so they share the rate fairly; a late timer is made up by the refill, up to a burst
 * of `burstSeconds` of bytes. A rate of undefined means unlimited. `now` is the clock in milliseconds
 * (a simulated network passes its virtual one).
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private bytesPerSec: number | undefined;

  constructor(
    rate: number | undefined,
    private readonly burstSeconds = 0.05,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.bytesPerSec = validRate(rate);
    this.tokens = this.capacity();
    this.last = now();
  }

  get rate(): number | undefined {
    return this.bytesPerSec;
  }

  /** Changes the rate from now on; the current debt is kept (and paid at the new rate). */
  setRate(rate: number | undefined): void {
    this.refill();
    this.bytesPerSec = validRate(rate);
    if (this.bytesPerSec === undefined) this.tokens = 0;
    else this.tokens = Math.min(this.tokens, this.capacity());
  }

  /** Takes `bytes`; resolves to the milliseconds to wait before sending them (0: send now). */
  reserve(bytes: number): number {
    if (this.bytesPerSec === undefined) return 0;
    this.refill();
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.bytesPerSec) * 1000;
  }

  private capacity(): number {
    return this.bytesPerSec === undefined ? 0 : this.bytesPerSec * this.burstSeconds;
  }

  private refill(): void {
    const now = this.now();
    if (this.bytesPerSec !== undefined) {
      this.tokens = Math.min(this.capacity(), this.tokens + ((now - this.last) / 1000) * this.bytesPerSec);
    }
    this.last = now;
  }
}

function validRate(rate: number | undefined): number | undefined {
  if (rate === undefined) return undefined;
  if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError(`bad rate ${rate}`);
  return rate;
}
