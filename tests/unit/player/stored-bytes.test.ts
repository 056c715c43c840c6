import { describe, expect, it } from 'vitest';
import type { JobView, PlayerPortMessage } from '../../../src/messages';
import { DownloadStopped, StoredBytes } from '../../../src/player/mse/stored-bytes';
import { StateFeed } from '../../../src/player/state-feed';
import { jobView } from '../pages/fixtures';

const size = 1000;
const file = Uint8Array.from({ length: size }, (_, i) => i % 256);
const store = {
  async *read(_id: string, start: number, end: number) {
    for (let pos = start; pos < end; pos += 300) yield file.slice(pos, Math.min(end, pos + 300));
  },
};
const state = (stored: { start: number; end: number }[], job: Partial<JobView> = {}): PlayerPortMessage => ({
  type: 'player-state',
  job: jobView({ id: 'j', size, ...job }),
  stored,
  bytesFreed: false,
});

describe('the stored bytes the MSE route reads', () => {
  it('reads at once what is stored, waits for the rest and says which byte it needs', async () => {
    const feed = new StateFeed();
    const needs: number[] = [];
    const bytes = new StoredBytes(store, 'j', size, feed, (p) => needs.push(p));
    feed.push(state([{ start: 0, end: 400 }]));
    expect(await bytes.read(100, 350)).toEqual(file.subarray(100, 350));
    const later = bytes.read(300, 900);
    expect(needs).toEqual([400]);
    feed.push(state([{ start: 0, end: 600 }]));
    feed.push(state([{ start: 0, end: size }]));
    expect(await later).toEqual(file.subarray(300, 900));
    expect(bytes.nextGap(0)).toBe(size);
  });

  it('reads what is stored from a byte on without waiting for the rest (a remux parses it now)', async () => {
    const feed = new StateFeed();
    const needs: number[] = [];
    const bytes = new StoredBytes(store, 'j', size, feed, (p) => needs.push(p));
    feed.push(state([{ start: 0, end: 400 }]));
    expect(await bytes.readAvailable(100, 900)).toEqual(file.subarray(100, 400));
    const waiting = bytes.readAvailable(500, 900);
    expect(needs).toEqual([500]);
    feed.push(
      state([
        { start: 0, end: 400 },
        { start: 500, end: 650 },
      ]),
    );
    expect(await waiting).toEqual(file.subarray(500, 650));
  });

  it('gives up when the download stops, and wakes waiting reads on interrupt (a seek)', async () => {
    const feed = new StateFeed();
    const bytes = new StoredBytes(store, 'j', size, feed, () => {});
    feed.push(state([]));
    const waiting = bytes.read(0, 10);
    bytes.interrupt(new Error('seek'));
    await expect(waiting).rejects.toThrow('seek');
    bytes.resume();
    const stopped = bytes.read(0, 10);
    feed.push(state([], { state: 'failed' }));
    await expect(stopped).rejects.toThrow(DownloadStopped);
  });

  it('after an interrupt, a read begun before resume does not wait (the rest of a segment at the old position)', async () => {
    const feed = new StateFeed();
    const bytes = new StoredBytes(store, 'j', size, feed, () => {});
    feed.push(state([{ start: 0, end: 10 }]));
    bytes.interrupt(new Error('seek'));
    expect(await bytes.read(0, 10)).toEqual(file.subarray(0, 10)); // stored: nothing to wait for
    await expect(bytes.read(10, 20)).rejects.toThrow('seek');
    bytes.resume();
    const moved = bytes.read(10, 20);
    feed.push(state([{ start: 0, end: 20 }]));
    expect(await moved).toEqual(file.subarray(10, 20));
  });
});
