import type { Clock } from './clock';

/** Transfer rate over a sliding window, for progress display and ETA. */
export class RateMeter {
  private readonly samples: Array<{ at: number; bytes: number }> = [];
  private total = 0;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = 5000,
  ) {}

  add(bytes: number): void {
    this.total += bytes;
    const at = this.clock.now();
    const last = this.samples[this.samples.length - 1];
    // Chunks arriving within a 64th of the window share a sample: a fast link then costs no
    // allocation per chunk and the window holds about 64 samples, however many chunks arrive.
    if (last && this.samples.length > 1 && at - last.at < this.windowMs / 64) {
      last.bytes = this.total;
      return;
    }
    this.samples.push({ at, bytes: this.total });
    while (this.samples.length > 2 && this.samples[0]!.at < at - this.windowMs) this.samples.shift();
  }

  /** Bytes per second over the window; 0 until two samples exist. */
  rate(): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at === first.at) return 0;
    // Include the idle time since the last sample so a stalled transfer decays to 0.
    const span = Math.max(last.at, this.clock.now()) - first.at;
    return ((last.bytes - first.bytes) * 1000) / span;
  }
}
