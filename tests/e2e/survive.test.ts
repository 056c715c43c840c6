import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { extensionPage, launchWithExtension, request } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { alwaysTakeOver, browserWith, linkPage, MiB, mirror, onCleanup, profile } from './support/setup';

/** Parses the first offset of a `bytes=N-` Range header. */
const rangeStart = (range: string | undefined) => Number(/bytes=(\d+)-/.exec(range ?? '')?.[1] ?? NaN);

test('the worker killed mid-download is woken by its alarm and ends with the exact file', async () => {
  const size = 32 * MiB;
  const seed = 7;
  // It also needs the page's Referer (hotlink protection): the session rule that sets it outlives the worker.
  const server = await mirror({ size, seed, filename: 'killed.bin', rate: 2 * MiB, requireReferer: /^http:\/\/localhost:\d+\/$/ });
  const page = new URL(await linkPage([{ id: 'f', href: server.url, text: 'file' }]));
  page.hostname = 'localhost';
  const p = profile();
  const browser = await browserWith(p);
  await alwaysTakeOver(browser);
  const tab = await browser.context.newPage();
  await tab.goto(page.href);
  await tab.click('#f');
  await until('6 MiB to arrive', () => server.stats.bytesSent > 6 * MiB, 30_000);

  const cdp = await browser.context.newCDPSession(tab);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  const stoppedAt = Date.now();
  const before = server.stats.requests.length;
  await tab.close(); // nothing but the restore alarm may wake the worker
  // What is tested is the wake and the resume, not the rest of the transfer: uncapped, it ends in a second once resumed.
  server.setRate(undefined);

  const saved = await waitForFile(p.downloads, 'killed.bin', size, 90_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  const resumed = server.stats.requests.slice(before).filter((r) => r.startedAt >= stoppedAt && r.range);
  expect(resumed.length).toBeGreaterThan(0);
  expect(rangeStart(resumed[0]!.range)).toBeGreaterThan(0); // resumed, not restarted
  expect(server.stats.requests.filter((r) => r.status === 403)).toEqual([]);
});

test('the browser restarted mid-download (same profile) resumes and ends with the exact file', async () => {
  const size = 32 * MiB;
  const seed = 8;
  // It also needs the page's Referer: session rules do not outlive the browser, the restored job sets its own again.
  const server = await mirror({ size, seed, filename: 'restarted.bin', rate: 3 * MiB, requireReferer: 'http://site.example/' });
  const p = profile();
  const first = await launchWithExtension(p);
  onCleanup(() => first.close().catch(() => {}));
  const ui = await extensionPage(first, 'offscreen/offscreen.html');
  const added = await request(ui, { type: 'add-url', url: server.url, referrer: 'http://site.example/downloads/page.html' });
  expect(added.ok).toBe(true);
  await until('8 MiB to arrive', () => server.stats.bytesSent > 8 * MiB, 30_000);
  await first.close();
  const restartedAt = Date.now();
  // What is tested is the resume, not the rest of the transfer: uncapped, it ends in a second once resumed.
  server.setRate(undefined);

  const second = await browserWith(p);
  const saved = await waitForFile(p.downloads, 'restarted.bin', size, 90_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  const after = server.stats.requests.filter((r) => r.startedAt >= restartedAt && r.range);
  expect(after.length).toBeGreaterThan(0);
  expect(rangeStart(after[0]!.range)).toBeGreaterThan(0);
  expect(server.stats.requests.filter((r) => r.status === 403)).toEqual([]);
  const ui2 = await extensionPage(second, 'offscreen/offscreen.html');
  const list = await request(ui2, { type: 'list-jobs' });
  expect(list.value?.jobs).toMatchObject([{ state: 'saved', size, filename: 'restarted.bin' }]);
});
