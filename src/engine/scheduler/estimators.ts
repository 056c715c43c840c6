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

  /** Records a finished block: actual over expected duration. */
  observe(actualMs: number, expectedMs: number): void {
    if (!(expectedMs > 0)) return;
    const ratio = actualMs / expectedMs;
    if (this.mean === undefined) {
      this.mean = ratio;
      this.deviation = ratio / 2;
      return;
    }
    this.deviation = 0.75 * this.deviation + 0.25 * Math.abs(ratio - this.mean);
    this.mean = 0.875 * this.mean + 0.125 * ratio;
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
}

/**
 * The block window (CoBlitz): how many requests may be in flight. It grows by 1/log(w) for
 * each block finished faster than average and shrinks by one for each block whose first
 * request missed its deadline, between 1 and a memory bound.
 */
export class BlockWindow {
  constructor(
    private size: number,
    private readonly max: number,
  ) {
    this.size = Math.min(Math.max(1, size), max);
  }

  get value(): number {
    return this.size;
  }

  allows(inFlight: number): boolean {
    return inFlight < Math.floor(this.size);
  }

  fastBlock(): void {
    const log = Math.log(this.size);
    this.size = Math.min(this.max, this.size + 1 / (log > 0 ? log : 1));
  }

  deadlineMissed(): void {
    this.size = Math.max(1, this.size - 1);
  }
}
