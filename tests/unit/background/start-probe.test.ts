import { expect, test } from 'vitest';
import {
  BASELINE_MS,
  baselineRate,
  beyondStitchPace,
  judgeProbe,
  MEASURE_MS,
  WARMUP_MS,
  type RateSample,
} from '../../../src/background/takeover/start-probe';
import { DEFAULT_STITCH_PACE, StitchPace, STITCH_PACE_KEY } from '../../../src/background/takeover/stitch-pace';
import { FakeBrowser } from '../../support/fake-browser';

const MB = 1_000_000;
const PROBE_AT = BASELINE_MS;
/** Stitch's pace in bytes per ms, as the probe is given it. */
const PACE = DEFAULT_STITCH_PACE / 1000;

/**
 * A trace sampled every 100 ms, as the browser's and the probe's byte counts would be recorded:
 * rates in bytes/s before the probe starts and after its warm-up (the probe gets half its rate while warming up).
 */
function trace(browserAlone: number, browserWith: number, probe: number, endAt = PROBE_AT + WARMUP_MS + MEASURE_MS + 100): RateSample[] {
  const samples: RateSample[] = [];
  let browserBytes = 0;
  let probeBytes = 0;
  for (let at = 0; at <= endAt; at += 100) {
    samples.push({ at, browserBytes, probeBytes });
    const warming = at >= PROBE_AT && at < PROBE_AT + WARMUP_MS;
    browserBytes += (at < PROBE_AT ? browserAlone : browserWith) / 10;
    probeBytes += at < PROBE_AT ? 0 : (warming ? probe / 2 : probe) / 10;
  }
  return samples;
}

test('a server that caps each connection: the probe adds its own rate and the browser keeps its own, so Stitch takes over', () => {
  expect(judgeProbe(trace(1 * MB, 1 * MB, 1 * MB), PROBE_AT, PACE)).toBe('take');
});

test('a full line: the probe only takes a share of the same rate, so the download is watched', () => {
  expect(judgeProbe(trace(10 * MB, 5 * MB, 5 * MB), PROBE_AT, PACE)).toBe('watch');
});

test('a total that rises but not clearly is watched', () => {
  expect(judgeProbe(trace(4 * MB, 4 * MB, 1.5 * MB), PROBE_AT, PACE)).toBe('watch');
});

test("a probe that is fast only by slowing the browser's download is watched", () => {
  expect(judgeProbe(trace(2 * MB, 1 * MB, 4 * MB), PROBE_AT, PACE)).toBe('watch');
});

test('no verdict before the measuring time is over; a browser download getting nothing alone is left to the rescue', () => {
  expect(judgeProbe(trace(1 * MB, 1 * MB, 1 * MB, PROBE_AT + WARMUP_MS + MEASURE_MS - 100), PROBE_AT, PACE)).toBe('measuring');
  expect(judgeProbe(trace(0, 0, 1 * MB), PROBE_AT, PACE)).toBe('watch');
});

test("a server that caps each connection, but a browser already near Stitch's own pace: watched, whatever the total", () => {
  // 45 MB/s alone, 45 + 45 together: Stitch, at 60 MB/s, would not be clearly faster than the browser.
  expect(judgeProbe(trace(45 * MB, 45 * MB, 45 * MB), PROBE_AT, PACE)).toBe('watch');
  expect(judgeProbe(trace(30 * MB, 30 * MB, 30 * MB), PROBE_AT, PACE)).toBe('take');
  // Known before any probe: the baseline alone says it.
  expect(beyondStitchPace(baselineRate(trace(45 * MB, 0, 0, PROBE_AT))!, PACE)).toBe(true);
  expect(beyondStitchPace(baselineRate(trace(30 * MB, 0, 0, PROBE_AT))!, PACE)).toBe(false);
  expect(baselineRate([{ at: 0, browserBytes: 0, probeBytes: 0 }])).toBeUndefined();
});

test("Stitch's pace: the fastest rate its own downloads ran at, never below the default, kept across starts", async () => {
  let time = 0;
  const browser = new FakeBrowser();
  const pace = new StitchPace(browser.storage, () => time);
  expect(await pace.get()).toBe(DEFAULT_STITCH_PACE);
  pace.observe(150 * MB);
  pace.observe(20 * MB);
  await pace.get();
  expect(await pace.get()).toBe(150 * MB);
  expect(await browser.storage.get(STITCH_PACE_KEY)).toBe(150 * MB);
  // A faster rate within 10 s counts at once, and is saved with the next one after that.
  pace.observe(160 * MB);
  expect(await pace.get()).toBe(160 * MB);
  expect(await browser.storage.get(STITCH_PACE_KEY)).toBe(150 * MB);
  time = 10_000;
  pace.observe(170 * MB);
  await pace.get();
  expect(await new StitchPace(browser.storage).get()).toBe(170 * MB);
});
