import type { Clock } from './clock';

/** A download's speed is the bytes of this many last milliseconds over their time. */
export const RATE_WINDOW_MS = 5_000;

/**
 * Nothing received for this long (and not held back by a speed limit): the download is stalled.
 * Its speed is then 0 and its time left unknown, while the engine waits on its stall timeout
 * (DEFAULT_STALL_SECONDS) or reconnects.
 */
export const STALLED_AFTER_MS = 3_000;

/** While nothing arrives, a running job still reports its progress this often (its speed falls to 0, it stalls). */
export const QUIET_PROGRESS_MS = 1_000;

/** The shortest time a pace is measured over (at the start, and after a stall). */
const MIN_SPAN_MS = 1_000;

interface Sample {
  at: number;
  /** Bytes received from the start of the measure up to `at`. */
  total: number;
}

/**
 * What a person is shown of a running download's pace: the bytes of the last RATE_WINDOW_MS over
 * their time, 0 once nothing has arrived for STALLED_AFTER_MS, and the time left at that pace.
 * Pure: it reads the time from the clock it is given, nothing else.
 *
 * A speed limit reads the body in bursts (a chunk, then a wait that can be longer than the
 * window); while the limit holds the bytes back (`heldBack`), the silence is Stitch's own: the
 * download is not stalled, and the pace always spans the last burst and the wait before it.
 */
export class ProgressRate {
  /** The measure's start (nothing received), then about 64 samples per window and one before it. */
  private readonly samples: Sample[];
  private total = 0;
  /** The last time bytes arrived, or a speed limit was seen holding them back. */
  private activeAt: number;

  constructor(private readonly clock: Clock) {
    const now = clock.now();
    this.samples = [{ at: now, total: 0 }];
    this.activeAt = now;
  }

  /** `bytes` arrived now. */
  add(bytes: number): void {
    const at = this.clock.now();
    // After a stall the pace starts again from these bytes: the silence said 0 while it lasted,
    // and a window half silent would now say a fraction of the pace (and hours left).
    if (at - this.activeAt >= STALLED_AFTER_MS) this.samples.splice(0, this.samples.length, { at, total: this.total });
    this.total += bytes;
    this.activeAt = at;
    const n = this.samples.length;
    // The newest sample moves with the chunks until it is a 64th of the window past the one
    // before it: a fast link costs no allocation per chunk, and the window holds about 64 samples.
    if (n > 2 && at - this.samples[n - 2]!.at < RATE_WINDOW_MS / 64) {
      const last = this.samples[n - 1]!;
      last.at = at;
      last.total = this.total;
      return;
    }
    this.samples.push({ at, total: this.total });
    // Kept: the last sample before the window (the pace's start) and the last two.
    while (this.samples.length > 2 && this.samples[1]!.at <= at - RATE_WINDOW_MS) this.samples.shift();
  }

  /** Milliseconds since bytes last arrived (or since the start, or since a limit last held them back). */
  quietMs(heldBack = false): number {
    const now = this.clock.now();
    if (heldBack) this.activeAt = now;
    return now - this.activeAt;
  }

  /** Nothing has arrived for STALLED_AFTER_MS, and no speed limit holds the bytes back. */
  stalled(heldBack = false): boolean {
    return this.quietMs(heldBack) >= STALLED_AFTER_MS;
  }

  /** Bytes per second over the last RATE_WINDOW_MS (and at least the last burst); 0 while stalled. */
  rate(heldBack = false): number {
    if (this.stalled(heldBack)) return 0;
    const now = this.clock.now();
    const from = now - RATE_WINDOW_MS;
    // The latest sample at or before the window's start, but never the last one: its bytes count.
    let i = 0;
    while (i + 1 < this.samples.length - 1 && this.samples[i + 1]!.at <= from) i++;
    const start = this.samples[i]!;
    const next = this.samples[i + 1];
    if (start.at < from && next && next.at > from) {
      // The bytes between two samples came in over the time between them: the window takes its share.
      const share = (from - start.at) / (next.at - start.at);
      return ((this.total - (start.total + share * (next.total - start.total))) * 1000) / RATE_WINDOW_MS;
    }
    // The window is not full yet (or a limit's burst reaches back further): from the sample
    // itself, over a second at least, so that the first chunk or two do not read as a burst of speed.
    return ((this.total - start.total) * 1000) / Math.max(MIN_SPAN_MS, now - start.at);
  }

  /** Seconds until `remaining` bytes are in at the current pace; undefined while it is 0 (stalled, or nothing yet). */
  etaSeconds(remaining: number, heldBack = false): number | undefined {
    const rate = this.rate(heldBack);
    return rate > 0 ? Math.max(0, remaining) / rate : undefined;
  }
}
