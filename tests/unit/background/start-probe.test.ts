import { expect, test } from 'vitest';
import { BASELINE_MS, judgeProbe, MEASURE_MS, WARMUP_MS, type RateSample } from '../../../src/background/takeover/start-probe';

const MB = 1_000_000;
const PROBE_AT = BASELINE_MS;

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
  expect(judgeProbe(trace(1 * MB, 1 * MB, 1 * MB), PROBE_AT)).toBe('take');
});

test('a full line: the probe only takes a share of the same rate, so the download is watched', () => {
  expect(judgeProbe(trace(10 * MB, 5 * MB, 5 * MB), PROBE_AT)).toBe('watch');
});

test('a total that rises but not clearly is watched', () => {
  expect(judgeProbe(trace(4 * MB, 4 * MB, 1.5 * MB), PROBE_AT)).toBe('watch');
});

test("a probe that is fast only by slowing the browser's download is watched", () => {
  expect(judgeProbe(trace(2 * MB, 1 * MB, 4 * MB), PROBE_AT)).toBe('watch');
});

test('no verdict before the measuring time is over; a browser download getting nothing alone is left to the rescue', () => {
  expect(judgeProbe(trace(1 * MB, 1 * MB, 1 * MB, PROBE_AT + WARMUP_MS + MEASURE_MS - 100), PROBE_AT)).toBe('measuring');
  expect(judgeProbe(trace(0, 0, 1 * MB), PROBE_AT)).toBe('watch');
});
