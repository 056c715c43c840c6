import { describe, expect, it } from 'vitest';
import type { JobSnapshot } from '../../../src/engine';
import type { HttpFetch } from '../../../src/engine/http/fetch-port';
import { QUIET_PROGRESS_MS, STALLED_AFTER_MS } from '../../../src/engine/progress-rate';
import { contentSha256 } from '../../support/content';
import { MiB, seedRandomEachTest, simDownload, simServers } from './sim-download';

/**
 * A download's numbers while its server is silent (issue 50, item 1), on the simulated network in
 * virtual time: the job's own progress events say stalled, 0 B/s and no time left within seconds,
 * keep coming while nothing does, and the pace comes back with the bytes.
 */
seedRandomEachTest();

describe('the numbers of a download whose server goes silent for 15 s', () => {
  it('say stalled with 0 B/s and no time left, every second of it, then the pace again; the file is exact', async () => {
    const size = 16 * MiB;
    const rate = 2 * MiB;
    const { network, clock, servers } = simServers([{ size, seed: 71, rate }]);
    // Every body goes silent from `from` to `until` (its connection stays open).
    const silence = { from: Infinity, until: 0 };
    const fetch: HttpFetch = async (url, init) => {
      const response = await network.fetch(url, init);
      if (!response.body) return response;
      const reader = response.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          const now = clock.now();
          if (now >= silence.from && now < silence.until) await clock.sleep(silence.until - now);
          controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return { ...response, body };
    };
    const seen: (JobSnapshot & { at: number })[] = [];
    const run = await simDownload(network, servers[0]!.url, [], { fetch, stallTimeoutMs: 20_000, progressIntervalMs: 250 }, (job) =>
      job.on('progress', (p) => {
        seen.push({ ...p, at: clock.now() });
        if (silence.from === Infinity && p.received > size / 3) {
          silence.from = clock.now();
          silence.until = silence.from + 15_000;
        }
      }),
    );
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(71, size));

    const { from, until } = silence;
    const before = seen.filter((p) => p.at > from - 1_000 && p.at < from);
    expect(before.at(-1)!.rate).toBeGreaterThan(0.8 * rate);
    expect(before.at(-1)!.etaSeconds).toBeGreaterThan(0);
    expect(before.every((p) => !p.stalled)).toBe(true);

    // Stalled within STALLED_AFTER_MS and one quiet report after it.
    const firstStalled = seen.find((p) => p.stalled)!;
    expect(firstStalled.at - from).toBeGreaterThanOrEqual(STALLED_AFTER_MS);
    expect(firstStalled.at - from).toBeLessThanOrEqual(STALLED_AFTER_MS + QUIET_PROGRESS_MS);
    const during = seen.filter((p) => p.at >= firstStalled.at && p.at < until);
    expect(during.length).toBeGreaterThanOrEqual(11);
    for (const p of during)
      expect({ stalled: p.stalled, rate: p.rate, eta: p.etaSeconds }).toEqual({ stalled: true, rate: 0, eta: undefined });
    // A report at least every QUIET_PROGRESS_MS though nothing comes.
    for (let i = 1; i < during.length; i++) expect(during[i]!.at - during[i - 1]!.at).toBeLessThanOrEqual(QUIET_PROGRESS_MS);
    // Between the silence's start and "stalled", the pace only falls.
    const falling = seen.filter((p) => p.at >= from && p.at < firstStalled.at).map((p) => p.rate);
    expect(falling).toEqual([...falling].sort((a, b) => b - a));

    // The bytes come again: a second later, the pace and a time left.
    const after = seen.filter((p) => p.at >= until + 1_000 && p.at < until + 2_000);
    expect(after.length).toBeGreaterThan(0);
    for (const p of after) {
      expect(p.stalled).toBeUndefined();
      expect(p.rate).toBeGreaterThan(0.7 * rate);
      expect(p.rate).toBeLessThan(1.3 * rate);
      expect(p.etaSeconds).toBeGreaterThan(0);
    }
  });
});
