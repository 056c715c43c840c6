import { afterEach, expect, test } from 'vitest';
import { CappedHosts, MAX_CAPPED_HOSTS } from '../../../src/background/takeover/capped-hosts';
import { measureAtStart } from '../../../src/background/takeover/start-measure';
import { DEFAULT_STITCH_PACE } from '../../../src/background/takeover/stitch-pace';
import type { BrowserDownload } from '../../../src/background/browser-api';
import { startMirror, type Mirror, type MirrorOptions } from '../../support/mirror-server';
import { FakeBrowser } from '../../support/fake-browser';

const MiB = 1024 * 1024;
const size = 64 * MiB;
const servers: Mirror[] = [];
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A real server, and the browser's download of it as downloads.search shows it: a plain GET read at the server's pace. */
async function browserDownloading(options: Omit<MirrorOptions, 'size'>) {
  const server = await startMirror({ size, seed: 9, ...options });
  servers.push(server);
  const item: BrowserDownload = { id: 1, url: server.url, state: 'in_progress', bytesReceived: 0, totalBytes: size };
  const controller = new AbortController();
  stops.push(() => controller.abort());
  void (async () => {
    const reader = (await fetch(server.url, { signal: controller.signal })).body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return void (item.state = 'complete');
      item.bytesReceived! += value.length;
    }
  })().catch(() => {});
  const downloads = { search: async () => ({ ...item }) };
  const measure = (stitchPace = DEFAULT_STITCH_PACE) =>
    measureAtStart(item, server.url, size, { downloads, fetch: (url, init) => fetch(url, init), stitchPace });
  return { server, item, measure };
}

/** The measuring request: the file's second half, open-ended. */
const measuring = (server: Mirror) => server.stats.requests.filter((r) => r.range === `bytes=${size / 2}-`);

test('a server that caps each connection: the second request adds its rate and the browser keeps its own, so Stitch takes over', async () => {
  const { server, measure } = await browserDownloading({ connectionRate: 2 * MiB });
  expect(await measure()).toBe('take');
  expect(measuring(server)).toHaveLength(1);
  // Ended once judged, long before the half it asked for.
  await expect.poll(() => measuring(server)[0]!.endedAt, { timeout: 2_000 }).toBeDefined();
  expect(measuring(server)[0]!.bytesSent).toBeLessThan(16 * MiB);
});

test('a full line (the server shares one rate among all connections): the second request only takes a share, so the download is watched', async () => {
  const { server, measure } = await browserDownloading({ rate: 4 * MiB });
  expect(await measure()).toBe('watch');
  expect(measuring(server)).toHaveLength(1);
});

test("a browser download already near Stitch's own pace is watched unprobed, however the server caps each connection", async () => {
  const { server, measure } = await browserDownloading({ connectionRate: 2 * MiB });
  // Stitch no faster than 2.5 MB/s: the browser's 2 MiB/s alone is already beyond what it could clearly beat.
  expect(await measure(2_500_000)).toBe('watch');
  expect(measuring(server)).toHaveLength(0);
});

test('a server that ignores ranges is watched without a verdict; so is a download the browser finishes while measured', async () => {
  const noRanges = await browserDownloading({ connectionRate: 2 * MiB, faults: { ignoreRanges: true } });
  expect(await noRanges.measure()).toBe('watch');

  const { item, measure } = await browserDownloading({ connectionRate: 2 * MiB });
  setTimeout(() => (item.state = 'complete'), 500);
  expect(await measure()).toBe('watch');
});

test('capped hosts are remembered across starts, the most recent first, and at most MAX_CAPPED_HOSTS of them', async () => {
  const browser = new FakeBrowser();
  const hosts = new CappedHosts(browser.storage);
  expect(await hosts.has('a.example:8080')).toBe(false);
  await hosts.remember('a.example:8080');
  expect(await new CappedHosts(browser.storage).has('a.example:8080')).toBe(true);
  for (let i = 0; i < MAX_CAPPED_HOSTS; i++) await hosts.remember(`h${i}.example`);
  expect(await hosts.has('a.example:8080')).toBe(false);
  expect(await hosts.has('h0.example')).toBe(true);
  // Measured again, an old host becomes the most recent and outlives the others.
  await hosts.remember('h0.example');
  await hosts.remember('new.example');
  expect(await hosts.has('h0.example')).toBe(true);
  expect(await hosts.has('h1.example')).toBe(false);
});
