import type { LoaderCallbacks, LoaderContext, LoaderStats } from 'hls.js';
import { describe, expect, it } from 'vitest';
import { storedLoader, type ReadRange } from '../../../src/player/hls/stored-loader';

const PLAYLIST_URL = 'chrome-extension://abc/stored-stream.m3u8';
const FILE = 'chrome-extension://abc/stored-stream';

const newStats = (): LoaderStats => ({
  aborted: false,
  loaded: 0,
  retry: 0,
  total: 0,
  chunkCount: 0,
  bwEstimate: 0,
  loading: { start: 0, first: 0, end: 0 },
  parsing: { start: 0, end: 0 },
  buffering: { start: 0, first: 0, end: 0 },
});

/** What hls.js would be told, in order. */
function recorder() {
  const told: string[] = [];
  const callbacks: LoaderCallbacks<LoaderContext> = {
    onSuccess: (response, stats) =>
      told.push(
        `success ${typeof response.data === 'string' ? response.data : new Uint8Array(response.data as ArrayBuffer).join(',')} (${stats.loaded} B)`,
      ),
    onError: (error) => told.push(`error ${error.text}`),
    onTimeout: () => told.push('timeout'),
    onAbort: () => told.push('abort'),
  };
  return { told, callbacks };
}

const segment = (rangeStart: number, rangeEnd: number): LoaderContext => ({
  url: FILE,
  responseType: 'arraybuffer',
  type: 'fragment' as never,
  rangeStart,
  rangeEnd,
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** The stored file 0, 1, 2, …; a read of bytes not yet "stored" waits until `release` is called, or its signal aborts. */
function storedFile() {
  const reads: string[] = [];
  const held: (() => void)[] = [];
  const read: ReadRange = (start, end, signal) => {
    reads.push(`${start}-${end}`);
    return new Promise((resolve, reject) => {
      held.push(() => resolve(Uint8Array.from({ length: end - start }, (_, i) => start + i).buffer));
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
  };
  return { read, reads, release: () => held.splice(0).forEach((go) => go()) };
}

describe('the stored stream loader (hls.js)', () => {
  it('answers the playlist with the text made for it, reading nothing', async () => {
    const file = storedFile();
    const Loader = storedLoader({ playlistUrl: PLAYLIST_URL, playlist: '#EXTM3U', read: file.read, newStats });
    const { told, callbacks } = recorder();
    new Loader({} as never).load({ url: PLAYLIST_URL, responseType: 'text', type: 'manifest' as never }, {} as never, callbacks);
    await settle();
    expect(told).toEqual(['success #EXTM3U (7 B)']);
    expect(file.reads).toEqual([]);
  });

  it("answers a segment with its byte range of the stored file once it is stored (hls.js's end is exclusive)", async () => {
    const file = storedFile();
    const Loader = storedLoader({ playlistUrl: PLAYLIST_URL, playlist: '', read: file.read, newStats });
    const { told, callbacks } = recorder();
    const loader = new Loader({} as never);
    loader.load(segment(3, 6), {} as never, callbacks);
    await settle();
    expect(told).toEqual([]);
    file.release();
    await settle();
    expect(file.reads).toEqual(['3-6']);
    expect(told).toEqual(['success 3,4,5 (3 B)']);
    expect(loader.stats.loading.end).toBeGreaterThanOrEqual(loader.stats.loading.start);
  });

  it('stops waiting when hls.js aborts (a seek elsewhere): told abort once, never success', async () => {
    const file = storedFile();
    const Loader = storedLoader({ playlistUrl: PLAYLIST_URL, playlist: '', read: file.read, newStats });
    const { told, callbacks } = recorder();
    const loader = new Loader({} as never);
    loader.load(segment(0, 10), {} as never, callbacks);
    loader.abort();
    file.release();
    await settle();
    expect(told).toEqual(['abort']);
    expect(loader.stats.aborted).toBe(true);
  });

  it('tells hls.js an error when the bytes cannot come, and nothing after destroy', async () => {
    const failing: ReadRange = () => Promise.reject(new Error('the download stopped'));
    const Loader = storedLoader({ playlistUrl: PLAYLIST_URL, playlist: '', read: failing, newStats });
    const first = recorder();
    new Loader({} as never).load(segment(0, 10), {} as never, first.callbacks);
    await settle();
    expect(first.told).toEqual(['error the download stopped']);

    const file = storedFile();
    const Destroyed = storedLoader({ playlistUrl: PLAYLIST_URL, playlist: '', read: file.read, newStats });
    const second = recorder();
    const loader = new Destroyed({} as never);
    loader.load(segment(0, 10), {} as never, second.callbacks);
    loader.destroy();
    file.release();
    await settle();
    expect(second.told).toEqual([]);
  });
});
