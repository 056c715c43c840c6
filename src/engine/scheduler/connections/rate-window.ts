/**
 * A server's total rate since its connection count last changed, over the last window of observations.
 * Pure: the caller passes the time.
 */

export interface RateWindowOptions {
  /** The window spans at least max(measureMs, measureRtts round trips)… */
  measureMs: number;
  measureRtts: number;
  /** …and holds at least this many bytes. */
  minMeasureBytes: number;
}

/**
 * Rates over the last window, the server's and the whole download's: `firstAt` is where the window starts,
 * `startedAt` when the count last changed; `downloadRise`, how much faster the whole download received in the
 * window's second half than in its first (0.2: 20 % faster; 0 when it cannot tell); `downloadLevel`, the whole
 * download's rate over the LEVEL_WINDOWS windows before this one, whatever the count (0 when there were none).
 */
export interface WindowRate {
  rate: number;
  downloadRate: number;
  downloadRise: number;
  downloadLevel: number;
  firstAt: number;
  startedAt: number;
}

/** The whole download's level spans this many windows: a dip of one window shows against it. */
const LEVEL_WINDOWS = 4;

export class RateWindow {
  private connections: number | undefined;
  private startedAt = 0;
  private bytes = 0;
  private downloadBytes = 0;
  /** (time, bytes so far) at the observations of the last window. */
  private samples: { at: number; bytes: number; downloadBytes: number }[] = [];
  /** (time, the whole download's bytes so far) at the observations of this window and the LEVEL_WINDOWS before. */
  private level: { at: number; downloadBytes: number }[] = [];
  private levelSpanMs: number;

  constructor(private readonly options: RateWindowOptions) {
    this.levelSpanMs = (LEVEL_WINDOWS + 1) * options.measureMs;
  }

  /**
   * Adds an observation: the server's `totalRate` since the previous one, with `connections` transferring, and
   * the whole download's rate (one server: the same); starts again when the count changes.
   */
  add(now: number, totalRate: number, connections: number, downloadRate = totalRate): void {
    const level = this.level;
    const last = level.at(-1);
    const downloadBytes = last ? last.downloadBytes + (downloadRate * Math.max(0, now - last.at)) / 1000 : 0;
    level.push({ at: now, downloadBytes });
    while (level.length > 2 && now - level[1]!.at >= this.levelSpanMs) level.shift();
    if (this.connections !== connections) {
      this.connections = connections;
      this.startedAt = now;
      this.bytes = 0;
      this.downloadBytes = 0;
      this.samples = [{ at: now, bytes: 0, downloadBytes: 0 }];
      return;
    }
    const seconds = Math.max(0, now - this.samples.at(-1)!.at) / 1000;
    this.bytes += totalRate * seconds;
    this.downloadBytes += downloadRate * seconds;
    this.samples.push({ at: now, bytes: this.bytes, downloadBytes: this.downloadBytes });
  }

  /** The rate over the last window, once the observations since the count changed span enough. */
  rate(now: number, rttMs: number): WindowRate | undefined {
    const samples = this.samples;
    if (samples.length < 2) return undefined;
    const { measureMs, measureRtts, minMeasureBytes } = this.options;
    const window = Math.max(measureMs, measureRtts * rttMs);
    // Bytes a busy event loop did not read arrive in a burst after it: a window spans twice its longest gap
    // between observations, so such a burst is at most half of it (and regular observations, one per
    // scheduler tick, hold a verdict back by no more than two ticks).
    const enough = (from: number) => {
      let gap = 0;
      for (let i = from + 1; i < samples.length; i++) gap = Math.max(gap, samples[i]!.at - samples[i - 1]!.at);
      const span = now - samples[from]!.at;
      return span >= window && span >= 2 * gap && this.bytes - samples[from]!.bytes >= minMeasureBytes;
    };
    while (samples.length > 2 && enough(1)) samples.shift();
    if (!enough(0)) return undefined;
    const first = samples[0]!;
    const ms = now - first.at;
    this.levelSpanMs = (LEVEL_WINDOWS + 1) * window;
    return {
      rate: ((this.bytes - first.bytes) / ms) * 1000,
      downloadRate: ((this.downloadBytes - first.downloadBytes) / ms) * 1000,
      downloadRise: this.downloadRise(now),
      downloadLevel: this.downloadLevel(first.at),
      firstAt: first.at,
      startedAt: this.startedAt,
    };
  }

  /** The whole download's rate over the second half of the window against the first (the observation nearest its middle). */
  private downloadRise(now: number): number {
    const samples = this.samples;
    const first = samples[0]!;
    const middle = (first.at + now) / 2;
    let split = first;
    for (const sample of samples) if (Math.abs(sample.at - middle) < Math.abs(split.at - middle)) split = sample;
    if (split.at <= first.at || split.at >= now) return 0;
    const before = (split.downloadBytes - first.downloadBytes) / (split.at - first.at);
    const after = (this.downloadBytes - split.downloadBytes) / (now - split.at);
    return before > 0 ? after / before - 1 : 0;
  }

  /** The whole download's rate from the oldest observation kept to `until`. */
  private downloadLevel(until: number): number {
    const level = this.level;
    const from = level[0]!;
    let to = from;
    for (const entry of level) if (entry.at <= until) to = entry;
    return to.at > from.at ? ((to.downloadBytes - from.downloadBytes) / (to.at - from.at)) * 1000 : 0;
  }

  /** The rate was used: the next one is measured from now, on fresh observations. */
  restart(now: number): void {
    this.samples = [{ at: now, bytes: this.bytes, downloadBytes: this.downloadBytes }];
  }
}
