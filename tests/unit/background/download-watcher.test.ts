import { afterEach, expect, test, vi } from 'vitest';
import { DownloadWatcher, WATCH_POLL_MS, WATCHED_KEY } from '../../../src/background/takeover/download-watcher';
import { WATCH_STALL_TIMEOUT_MS } from '../../../src/background/takeover/watch-rescue';
import { FakeBrowser } from '../../support/fake-browser';

afterEach(() => void vi.useRealTimers());

function watcher() {
  vi.useFakeTimers();
  const browser = new FakeBrowser();
  const rescued: string[] = [];
  const watch = new DownloadWatcher({ api: browser, rescue: async (item, why) => void rescued.push(`${item.id}: ${why}`) });
  const item = browser.startBrowserDownload({ url: 'https://example.com/big.iso', bytesReceived: 0, canResume: false });
  const live = browser.items.get(item.id)!;
  const tick = () => vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  return { browser, rescued, watch, item, live, tick };
}

test('one timer polls while a download is watched, and none once it is complete', async () => {
  const { watch, item, live, tick } = watcher();
  expect(vi.getTimerCount()).toBe(0);
  watch.watch(item);
  expect(vi.getTimerCount()).toBe(1);
  await tick();
  live.state = 'complete';
  await tick();
  expect(vi.getTimerCount()).toBe(0);
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
  for (let waited = 0; waited < WATCH_STALL_TIMEOUT_MS; waited += WATCH_POLL_MS) await tick();
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

  await new DownloadWatcher({ api: browser, rescue: async () => {} }).restore();
  expect(await browser.storage.get(WATCHED_KEY)).toEqual([broken.id]);
  await vi.advanceTimersByTimeAsync(WATCH_POLL_MS);
  expect(browser.calls).toEqual([`resume ${broken.id}`]);
});
