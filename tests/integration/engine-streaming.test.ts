import { describe, expect, it } from 'vitest';
import { normalizeRanges } from '../../src/engine/ranges';
import { contentSha256 } from '../support/content';
import { MiB, useTestBed } from '../support/test-bed';

const bed = useTestBed();

describe('streaming priority', () => {
  it('fetches the bytes ahead of the playback position first, then moves with a seek', async () => {
    const size = 16 * MiB;
    const m = await bed.mirror({ size, seed: 80, rate: 4 * MiB });
    const covered = (ranges: { start: number; end: number }[], start: number, end: number) =>
      normalizeRanges(ranges).some((r) => r.start <= start && r.end >= end);
    const firstAt: Record<string, number> = {};
    const t0 = Date.now();
    const run = await bed.download(m.url, {}, (job, store) => {
      job.setPlayback([{ position: 12 * MiB, aheadBytes: MiB }]);
      const watch = setInterval(() => {
        void (async () => {
          const stored = await store.storedRanges('job');
          if (!firstAt.ahead && covered(stored, 12 * MiB, 13 * MiB)) {
            firstAt.ahead = Date.now() - t0;
            // Seek back to 4 MiB: that window must come next.
            job.setPlayback([{ position: 4 * MiB, aheadBytes: MiB }]);
          }
          if (firstAt.ahead && !firstAt.seek && covered(stored, 4 * MiB, 5 * MiB)) firstAt.seek = Date.now() - t0;
        })();
      }, 20);
      job.on('status', (s) => s.status !== 'running' && clearInterval(watch));
    });
    const total = Date.now() - t0;
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(80, size));
    console.log(`window at 12 MiB stored after ${firstAt.ahead} ms, after the seek to 4 MiB: ${firstAt.seek} ms, whole file ${total} ms`);
    // 1 MiB at 4 MiB/s takes 0.25 s plus the first round trips; the whole file 4 s.
    expect(firstAt.ahead).toBeLessThan(1200);
    expect(firstAt.seek! - firstAt.ahead!).toBeLessThan(1200);
    expect(total).toBeGreaterThan(3500);
  });
});
