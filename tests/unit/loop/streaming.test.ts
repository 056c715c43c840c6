/**
 * Streaming priority and seeks (the job's playback API), on the simulated network in virtual time: the
 * bytes a player needs come first, a seek moves them, and the times are those of the network's model.
 */
import { describe, expect, it } from 'vitest';
import type { DownloadJob } from '../../../src/engine';
import { contentSha256 } from '../../support/content';
import type { FakeClock } from '../../support/fake-clock';
import { StoredWatch } from '../../support/stored-watch';
import { MiB, seedRandomEachTest, simDownload, simServers } from './sim-download';

seedRandomEachTest();

/** Virtual milliseconds until [start, end) is stored. */
async function timeUntil(clock: FakeClock, watch: StoredWatch, start: number, end: number): Promise<number> {
  const t0 = clock.now();
  await watch.until(start, end);
  return clock.now() - t0;
}

describe('streaming priority, in virtual time', () => {
  it('fetches the bytes ahead of the playback position first, then moves with a seek', async () => {
    const size = 16 * MiB;
    const { clock, network, servers } = simServers([{ size, seed: 80, rate: 4 * MiB }]);
    const times: Record<string, number> = {};
    const run = await simDownload(network, servers[0]!.url, [], {}, (job) => {
      const watch = new StoredWatch(job);
      job.setPlayback([{ position: 12 * MiB, aheadBytes: MiB }]);
      void (async () => {
        times.ahead = await timeUntil(clock, watch, 12 * MiB, 13 * MiB);
        // Seek back to 4 MiB: that window must come next.
        job.setPlayback([{ position: 4 * MiB, aheadBytes: MiB }]);
        times.seek = await timeUntil(clock, watch, 4 * MiB, 5 * MiB);
      })();
    });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(80, size));
    // 1 MiB at 4 MiB/s takes 0.25 s (the real-socket test allowed 1.2 s for each); the whole file 4 s.
    expect(times.ahead).toBeLessThan(300);
    expect(times.seek).toBeLessThan(300);
    expect(run.seconds).toBeGreaterThan(3.5);
    expect(run.seconds).toBeLessThan(4.5);
  });

  it('a seek into a request still far from the target is served by a fresh request there (time to byte)', async () => {
    // A clip of 2.16 MB at 150 kB/s, served at twice its bitrate from one server.
    const size = 2_160_000;
    const bitrate = 150_000;
    const { clock, network, servers } = simServers([{ size, seed: 81, rate: 2 * bitrate, latencyMs: 20 }]);
    const times: Record<string, number> = {};
    const play = (job: DownloadJob, position: number) => job.setPlayback([{ position, aheadBytes: 10 * bitrate, bytesPerSecond: bitrate }]);
    const run = await simDownload(network, servers[0]!.url, [], {}, (job) => {
      const watch = new StoredWatch(job);
      play(job, 0);
      void (async () => {
        times.first = await timeUntil(clock, watch, 0, bitrate);
        // Forward to 80 %, where no request has reached yet, then back to 30 %: two seconds of media each.
        play(job, 0.8 * size);
        times.forward = await timeUntil(clock, watch, 0.8 * size, 0.8 * size + 2 * bitrate);
        play(job, 0.3 * size);
        times.back = await timeUntil(clock, watch, 0.3 * size, 0.3 * size + 2 * bitrate);
      })();
    });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(81, size));
    // Two seconds of media at twice the bitrate arrive in about one second; reaching the target through the
    // bytes before it would take several (the real-socket test allowed 2 s for each).
    expect(times.forward).toBeLessThan(1200);
    expect(times.back).toBeLessThan(1400);
  });

  it('while the bytes a seek needs are being stored, takes no far block only to cut it again', async () => {
    // Chrome's element reads the index at the end before it seeks: a few KiB, stored slowly here, while
    // the engine has blocks near the old playhead to fetch. The e2e player test once saw thousands of
    // requests issued and cut within a second, and the index never stored.
    const size = 2 * MiB;
    const bitrate = 150_000;
    const { clock, network, servers } = simServers([{ size, seed: 82, rate: 2 * bitrate, latencyMs: 20 }]);
    const index = { start: size - 9189, end: size };
    let requestsWhileStoring = 0;
    // Room for two requests in flight (two records of memory): both taken by far blocks, no fresh request fits.
    const run = await simDownload(network, servers[0]!.url, [], { maxBufferBytes: 512 * 1024 }, (job, store) => {
      const write = store.writeBlock.bind(store);
      store.writeBlock = async (jobId, offset, data) => {
        if (offset + data.length <= index.start) return write(jobId, offset, data);
        const before = servers[0]!.stats.requests.length;
        // The store takes 300 ms over the index's bytes.
        await new Promise<void>((resolve) => clock.after(300, resolve));
        requestsWhileStoring += servers[0]!.stats.requests.length - before;
        return write(jobId, offset, data);
      };
      const watch = new StoredWatch(job);
      job.setPlayback([{ position: 0, aheadBytes: 10 * bitrate, bytesPerSecond: bitrate }]);
      void (async () => {
        await watch.until(0, bitrate);
        job.setPlayback([{ position: index.start, aheadBytes: 10 * bitrate, bytesPerSecond: bitrate }]);
        await watch.until(index.start, index.end);
        job.setPlayback([]);
      })();
    });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(82, size));
    expect(requestsWhileStoring).toBeLessThanOrEqual(2);
  });
});
