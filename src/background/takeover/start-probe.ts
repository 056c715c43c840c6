/**
 * The measuring probe's verdict (issue 27, decide at the start): while the browser's download runs,
 * Stitch opens one ranged request for a later part of the file. If the two together clearly beat
 * the browser alone while the browser keeps its own rate, the server caps each connection and
 * Stitch's several connections win: take over (and remember the host). If the total stays flat, the
 * line or the disk is the limit and a take-over would only add a second pass: watch. Whatever the
 * server rewards, Stitch gets no faster than its own pace (stitch-pace.ts: fetch to store, on this
 * machine): a browser download already near it is watched, and is not even probed.
 * Pure: it judges a trace of byte counts; the requests and the clock are start-measure.ts's.
 */

/** Cumulative bytes of each download at one moment. */
export interface RateSample {
  at: number;
  browserBytes: number;
  probeBytes: number;
}

export type ProbeVerdict = 'take' | 'watch' | 'measuring';

/** The browser's rate alone: over this long before the probe starts. */
export const BASELINE_MS = 1_000;
/** The probe's first moments are left out: a new connection starts slow (TCP slow start). */
export const WARMUP_MS = 300;
/** Then both rates are compared over this long. */
export const MEASURE_MS = 1_500;
/** "Clearly rises": the total is at least this much the browser's rate alone. */
export const CLEAR_GAIN = 1.5;
/** "The browser's rate holds": it keeps at least this share of its rate alone. */
export const BROWSER_HOLDS = 0.8;

/**
 * Whether the browser, at `browserRate`, is already beyond what Stitch could clearly beat at its own
 * pace (both in bytes per ms): then no server's reward makes a take-over faster.
 */
export function beyondStitchPace(browserRate: number, stitchPace: number): boolean {
  return stitchPace < browserRate * CLEAR_GAIN;
}

/** The browser's rate alone over a trace taken before the probe, in bytes per ms; undefined while it spans no time. */
export function baselineRate(trace: readonly RateSample[]): number | undefined {
  const first = trace[0];
  const last = trace.at(-1);
  return first && last && last.at > first.at ? (last.browserBytes - first.browserBytes) / (last.at - first.at) : undefined;
}

/** `trace` in time order; `probeStartedAt` on the same clock; `stitchPace` in bytes per ms. */
export function judgeProbe(trace: readonly RateSample[], probeStartedAt: number, stitchPace: number): ProbeVerdict {
  const alone = rateBetween(trace, probeStartedAt - BASELINE_MS, probeStartedAt);
  const measureFrom = probeStartedAt + WARMUP_MS;
  const together = rateBetween(trace, measureFrom, measureFrom + MEASURE_MS);
  if (!alone || !together) return 'measuring';
  // A browser download getting nothing alone cannot be compared with: only the rescue can help it.
  if (alone.browser <= 0) return 'watch';
  // Stitch with as many connections gets at least their total, but never past its own pace.
  const gains = Math.min(together.browser + together.probe, stitchPace) >= alone.browser * CLEAR_GAIN;
  const holds = together.browser >= alone.browser * BROWSER_HOLDS;
  return gains && holds ? 'take' : 'watch';
}

/** Bytes per ms of each download between the samples bounding [from, to]; undefined until the trace covers it. */
function rateBetween(trace: readonly RateSample[], from: number, to: number): { browser: number; probe: number } | undefined {
  const first = trace.find((s) => s.at >= from);
  const last = trace.findLast((s) => s.at <= to);
  const covered = trace.some((s) => s.at >= to);
  if (!first || !last || !covered || last.at <= first.at) return undefined;
  const span = last.at - first.at;
  return { browser: (last.browserBytes - first.browserBytes) / span, probe: (last.probeBytes - first.probeBytes) / span };
}
