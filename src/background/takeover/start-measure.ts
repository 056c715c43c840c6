import type { HttpFetch } from '../../engine';
import type { BrowserApi, BrowserDownload } from '../browser-api';
import type { JobCredentials } from '../jobs/create-job';
import { takeoverFetch } from './probe';
import type { StitchPace } from './stitch-pace';
import { BASELINE_MS, baselineRate, beyondStitchPace, judgeProbe, MEASURE_MS, WARMUP_MS, type RateSample } from './start-probe';

/** How often the browser's byte count is looked at while measuring. */
export const SAMPLE_MS = 50;
/** A verdict not reached this long after the measuring request was asked (no answer, a slow one) is a watch. */
export const GIVE_UP_MS = WARMUP_MS + MEASURE_MS + 1_500;

export interface MeasureDeps {
  downloads: Pick<BrowserApi['downloads'], 'search'>;
  /** Asks as the job would (credentials, Referer, redirects checked), within the downloads' connections (host-connections.ts). */
  fetch: HttpFetch;
  /** Stitch's own pace on this machine, in bytes/s (stitch-pace.ts). */
  stitchPace: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The start probe (issue 27): while the browser's download of `url` runs, measures its rate alone,
 * then asks for the file's second half with one more request and measures both; start-probe.ts
 * judges the trace. The request is ended once judged. Anything that stops the measuring (the
 * browser's download ends or pauses, the server sends no 206) is a watch: the rescue still helps.
 */
export async function measureAtStart(item: BrowserDownload, url: string, size: number, deps: MeasureDeps): Promise<'take' | 'watch'> {
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  const startedAt = now();
  const trace: RateSample[] = [];
  let probeBytes = 0;
  let failed = false;

  // Chrome updates a download's count about twice a second: a sample is taken when the count
  // moved, so each one is exact at its time and rates are not off by a half-second step.
  const sample = async (): Promise<boolean> => {
    const download = await deps.downloads.search(item.id).catch(() => undefined);
    if (download?.state !== 'in_progress' || download.paused === true) return false;
    const browserBytes = download.bytesReceived ?? 0;
    const last = trace.at(-1);
    if (!last || browserBytes !== last.browserBytes) trace.push({ at: now() - startedAt, browserBytes, probeBytes });
    return true;
  };

  while (now() - startedAt < BASELINE_MS) {
    if (!(await sample())) return 'watch';
    await sleep(SAMPLE_MS);
  }
  const pace = deps.stitchPace / 1000;
  // A browser already near Stitch's own pace is left alone, unprobed: no server's reward could change that.
  const alone = baselineRate(trace);
  if (alone !== undefined && beyondStitchPace(alone, pace)) return 'watch';
  const askedAt = now() - startedAt;
  // From its answer: it may wait for a connection (host-connections.ts) before it is even sent.
  let probeStartedAt: number | undefined;
  const controller = new AbortController();
  // A later part of the file, which the browser's download does not reach while measuring.
  const reading = (async () => {
    const response = await deps.fetch(url, {
      headers: { Range: `bytes=${Math.floor(size / 2)}-` },
      cache: 'no-store',
      signal: controller.signal,
    });
    if (response.status !== 206 || !response.body) throw new Error(`no part of the file (${response.status})`);
    probeStartedAt = now() - startedAt;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      probeBytes += value.length;
    }
  })().catch(() => {
    failed = !controller.signal.aborted;
  });
  try {
    while (now() - startedAt - askedAt < GIVE_UP_MS && !failed) {
      if (!(await sample())) return 'watch';
      const verdict = probeStartedAt === undefined ? 'measuring' : judgeProbe(trace, probeStartedAt, pace);
      if (verdict !== 'measuring') return verdict;
      await sleep(SAMPLE_MS);
    }
    return 'watch';
  } finally {
    controller.abort(new Error('measured'));
    await reading;
  }
}

/** measureAtStart with the browser's downloads, Stitch's requests as a download's and its pace (the take-over's `measure`). */
export function measuring(downloads: MeasureDeps['downloads'], pace: StitchPace) {
  return async (item: BrowserDownload, url: string, size: number, init: { referrer?: string; credentials: JobCredentials }) =>
    measureAtStart(item, url, size, {
      downloads,
      fetch: takeoverFetch(url, { ...init, connections: 'shared' }),
      stitchPace: await pace.get(),
    });
}
