import { afterEach, expect, test, vi } from 'vitest';
import { DownloadWatcher, WATCH_ALARM, WATCH_POLL_MS, WATCHED_KEY } from '../../../src/background/takeover/download-watcher';
import type { WatchedRow } from '../../../src/messages';
import { FakeBrowser } from '../../support/fake-browser';

afterEach(() => void vi.useRealTimers());

/** The default stall timeout (the settings' `stallSeconds`). */
const STALL_MS = 20_000;
const stallTimeoutMs = async () => STALL_MS;

function watcher(stall = stallTimeoutMs) {
  vi.useFakeTimers();
  const browser = new FakeBrowser();
  const rescued: string[] = [];
  const watch = new DownloadWatcher({
    api: browser,
    rescue: async (item, why) => void rescued.push(`${item.id}: ${why}`),
    stallTimeoutMs: stall,
  });
  const item = browser.startBrowserDownload({ url: 'https://example.com/big.iso', bytesReceived: 0, canResume: false });
  const live = browser.items.get(item.id)!;
  const tick = () => vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  return { browser, rescued, watch, item, live, tick };
}

test('one timer polls while a download is watched, and none once it is complete; an alarm wakes a stopped worker meanwhile', async () => {
  const { browser, watch, item, live, tick } = watcher();
  expect(vi.getTimerCount()).toBe(0);
  watch.watch(item);
  expect(vi.getTimerCount()).toBe(1);
  expect([...browser.alarmsSet]).toEqual([WATCH_ALARM]);
  await tick();
  live.state = 'complete';
  await tick();
  expect(vi.getTimerCount()).toBe(0);
  expect([...browser.alarmsSet]).toEqual([]);
});

test('an interrupted, resumable download is resumed; one the browser cannot resume is rescued with the reason', async () => {
  const { browser, rescued, watch, item, live, tick } = watcher();
  watch.watch(item);
  Object.assign(live, { state: 'interrupted', error: 'NETWORK_FAILED', canResume: true, bytesReceived: 1000 });
  await tick();
  expect(browser.calls).toEqual([`resume ${item.id}`]);
  Object.assign(live, { canResume: false, bytesReceived: 2000 });
  await tick();
  expect(rescued).toEqual([`${item.id}: The browser's download broke and the browser cannot resume it: Stitch took it over.`]);
  expect(vi.getTimerCount()).toBe(0);
});

test('a download without bytes for the stall timeout is paused and resumed', async () => {
  const { browser, watch, item, tick } = watcher();
  watch.watch(item);
  for (let waited = 0; waited < STALL_MS; waited += WATCH_POLL_MS) await tick();
  expect(browser.calls).toEqual([`pause ${item.id}`, `resume ${item.id}`]);
});

test("the stall timeout is the user's, read at each look", async () => {
  const { browser, watch, item, tick } = watcher(async () => 5_000);
  watch.watch(item);
  for (let waited = 0; waited < 5_000; waited += WATCH_POLL_MS) await tick();
  expect(browser.calls).toEqual([`pause ${item.id}`, `resume ${item.id}`]);
});

test('the watched downloads are kept in storage, each until it is done', async () => {
  const { browser, watch, item, live, tick } = watcher();
  const other = browser.startBrowserDownload({ url: 'https://example.com/other.iso', bytesReceived: 0 });
  watch.watch(item);
  watch.watch(other);
  await vi.advanceTimersByTimeAsync(0);
  expect(await browser.storage.get(WATCHED_KEY)).toEqual([item.id, other.id]);
  live.state = 'complete';
  await tick();
  expect(await browser.storage.get(WATCHED_KEY)).toEqual([other.id]);
});

test('a new worker watches again what the last one watched: an interrupted download is resumed; gone or finished ones are dropped', async () => {
  vi.useFakeTimers();
  const browser = new FakeBrowser();
  const broken = browser.startBrowserDownload({ url: 'https://example.com/big.iso', bytesReceived: 1000, canResume: true });
  Object.assign(browser.items.get(broken.id)!, { state: 'interrupted', error: 'NETWORK_FAILED' });
  const done = browser.startBrowserDownload({ url: 'https://example.com/done.iso', state: 'complete' });
  await browser.storage.set(WATCHED_KEY, [broken.id, done.id, 999]);

  await new DownloadWatcher({ api: browser, rescue: async () => {}, stallTimeoutMs }).restore();
  expect(await browser.storage.get(WATCHED_KEY)).toEqual([broken.id]);
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  expect(browser.calls).toEqual([`resume ${broken.id}`]);
});

test('each watched download is a row: its name, host, bytes, size, rate over the last polls, and its state, told once per change', async () => {
  vi.useFakeTimers();
  const browser = new FakeBrowser();
  const told: WatchedRow[][] = [];
  const watch = new DownloadWatcher({ api: browser, rescue: async () => {}, onChange: (rows) => void told.push(rows), stallTimeoutMs });
  const item = browser.startBrowserDownload({
    url: 'https://example.com/get?id=7',
    finalUrl: 'https://cdn.example.com:8443/files/big.iso',
    filename: '/home/me/Downloads/big (1).iso',
    totalBytes: 10_000_000,
    bytesReceived: 1_000_000,
    canResume: true,
  });
  const live = browser.items.get(item.id)!;
  watch.watch(item);
  await vi.advanceTimersByTimeAsync(0);
  const first = {
    downloadId: item.id,
    name: 'big (1).iso',
    url: 'https://cdn.example.com:8443/files/big.iso',
    host: 'cdn.example.com:8443',
    received: 1_000_000,
    size: 10_000_000,
    bytesPerSecond: 0,
    state: 'downloading',
  };
  expect(told).toEqual([[first]]);
  expect(watch.rows()).toEqual([first]);

  // 2 MB a second for two polls: the rate is over both.
  live.bytesReceived = 3_000_000;
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  live.bytesReceived = 5_000_000;
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  expect(told.map((rows) => [rows[0]!.received, rows[0]!.bytesPerSecond])).toEqual([
    [1_000_000, 0],
    [3_000_000, 2_000_000],
    [5_000_000, 2_000_000],
  ]);

  // Nothing changed: nothing told.
  live.paused = true;
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  expect(told.at(-1)![0]).toMatchObject({ state: 'paused', bytesPerSecond: 0 });
  const count = told.length;
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  expect(told).toHaveLength(count);

  Object.assign(live, { paused: false, state: 'interrupted', error: 'NETWORK_FAILED' });
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  expect(told.at(-1)![0]).toMatchObject({ state: 'resuming', bytesPerSecond: 0, received: 5_000_000 });

  live.state = 'complete';
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  expect(told.at(-1)).toEqual([]);
  expect(watch.rows()).toEqual([]);
});

test('a download without a name yet is named by its address', () => {
  const { watch, item } = watcher();
  watch.watch(item);
  expect(watch.rows()[0]).toMatchObject({ name: 'big.iso', host: 'example.com', received: 0, state: 'downloading' });
  expect(watch.rows()[0]).not.toHaveProperty('size');
});

test('Take over: the watch ends at once, and the download goes the rescue’s way with a notice that the user asked', async () => {
  const { browser, rescued, watch, item, tick } = watcher();
  watch.watch(item);
  expect(await watch.takeOver(item.id)).toBe('taken');
  expect(rescued).toEqual([`${item.id}: Stitch took over the browser's download, as you asked.`]);
  expect(watch.rows()).toEqual([]);
  expect(await browser.storage.get(WATCHED_KEY)).toEqual([]);
  await tick();
  expect(vi.getTimerCount()).toBe(0);
  // Not watched (any more): nothing to take.
  expect(await watch.takeOver(item.id)).toBe('not-watched');
  expect(rescued).toHaveLength(1);
});

test('Take over refused by the server (the rescue leaves it): the browser keeps it, watched again', async () => {
  vi.useFakeTimers();
  const browser = new FakeBrowser();
  const watch = new DownloadWatcher({ api: browser, rescue: async () => 'left', stallTimeoutMs });
  const item = browser.startBrowserDownload({ url: 'https://example.com/big.iso', bytesReceived: 0 });
  watch.watch(item);
  expect(await watch.takeOver(item.id)).toBe('left');
  expect(watch.rows().map((row) => row.downloadId)).toEqual([item.id]);
  expect(await browser.storage.get(WATCHED_KEY)).toEqual([item.id]);
});

test('Take over of a download the browser finished meanwhile does nothing', async () => {
  const { rescued, watch, item, live } = watcher();
  watch.watch(item);
  live.state = 'complete';
  expect(await watch.takeOver(item.id)).toBe('not-watched');
  expect(rescued).toEqual([]);
});
