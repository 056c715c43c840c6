import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import type { Mirror } from '../support/mirror-server';
import { fileSha256, until, waitForFile } from './support/files';
import { extensionPage, request } from './support/chromium';
import type { Settings } from '../../src/settings/schema';
import { browserWith, changeSettings, linkPage, MiB, mirror, profile } from './support/setup';

/** Chromium with Stitch's default settings (Always take over off) but `change`, on a page of links to `hrefs` (ids f0, f1, …). */
async function withDefaults(hrefs: string[], change: Partial<Settings> = {}) {
  // The link page first: cleanup closes the browser, and its open connections, before the page's server.
  const page = await linkPage(hrefs.map((href, i) => ({ id: `f${i}`, href, text: `file ${i}` })));
  const p = profile();
  const browser = await browserWith(p);
  const ui = await changeSettings(browser, change);
  const tab = await browser.context.newPage();
  await tab.goto(page);
  const list = async () => (await request(ui, { type: 'list-jobs' })).value!;
  const notices = async () => (await list()).notices.map(({ message, url }) => ({ message, url }));
  const jobs = async () => (await list()).jobs;
  return { browser, tab, downloads: p.downloads, notices, jobs };
}

/** After a click on a link to `file`: a plain download Stitch leaves with the browser (measured, then watched). */
async function clickWatched(file: Mirror, change: Partial<Settings> = {}) {
  const chromium = await withDefaults([file.url], change);
  await chromium.tab.click('#f0');
  return chromium;
}

/** The start probe's measuring requests: the second half of the file, open-ended. */
const measuringRequests = (server: Mirror, size: number) => server.stats.requests.filter((r) => r.range === `bytes=${size / 2}-`);

test('a server that caps each connection: Stitch measures, takes the download over early, exact, and takes the next from that host at once', async () => {
  const size = 24 * MiB;
  const seed = 63;
  const server = await mirror({ size, seed, connectionRate: 1 * MiB, filename: (query) => `capped-${query.get('n')}.bin` });
  const { tab, downloads, notices, jobs } = await withDefaults([`${server.url}?n=1`, `${server.url}?n=2`]);

  await tab.click('#f0');
  await until('the first download taken over', async () => (await jobs()).length === 1, 20_000);
  expect(measuringRequests(server, size)).toHaveLength(1);
  const expected = await contentSha256(seed, size);
  expect(await fileSha256(await waitForFile(downloads, 'capped-1.bin', size, 60_000))).toBe(expected);

  // The host is remembered as capping each connection: no measuring this time.
  await tab.click('#f1');
  await until('the second download taken over', async () => (await jobs()).length === 2, 20_000);
  expect(measuringRequests(server, size)).toHaveLength(1);
  expect(await fileSha256(await waitForFile(downloads, 'capped-2.bin', size, 60_000))).toBe(expected);
  expect(await notices()).toEqual([]);
});

test('a line that is the limit (the server shares one rate among all connections): the download stays with the browser, watched, and ends exact', async () => {
  const size = 40 * MiB;
  const seed = 64;
  const file = await mirror({ size, seed, rate: 8 * MiB, filename: 'line.bin' });
  const { downloads, notices, jobs } = await clickWatched(file);

  const saved = await waitForFile(downloads, 'line.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Measured once, and left with the browser: one request of its own for the whole file, and Stitch's first byte.
  expect(measuringRequests(file, size)).toHaveLength(1);
  expect(file.stats.requests.filter((r) => r.range === undefined)).toHaveLength(1);
  expect(await jobs()).toEqual([]);
  expect(await notices()).toEqual([]);
});

test('a watched download Chromium gives up on after its own 5 resumes is taken over by Stitch and ends exact', async () => {
  const size = 24 * MiB;
  const seed = 61;
  // The browser's request, Stitch's 1-byte probe, its measuring request (Chromium's own resumes keep the download
  // in progress meanwhile) and Chromium's 5 resumes: all reset.
  const file = await mirror({ size, seed, filename: 'watched.bin', rate: 8 * MiB, faults: { resetAfterMs: 300, faultRequests: 8 } });
  const { downloads, notices } = await clickWatched(file);

  const saved = await waitForFile(downloads, 'watched.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Chromium's resumes ask for the rest (`bytes=N-`); Stitch was left out of it until Chromium gave up.
  expect(file.stats.requests.filter((r) => /^bytes=\d+-$/.test(r.range ?? '')).length).toBeGreaterThanOrEqual(5);
  expect(await notices()).toEqual([
    {
      message: 'The browser tried to resume its download several times and got no further: Stitch took it over.',
      url: file.url,
    },
  ]);
});

test('a watched download whose server stops sending is rescued, and ends exact', async () => {
  const size = 24 * MiB;
  const seed = 62;
  // The browser's request stalls after 4 MiB (Stitch's 1-byte probe, the second request, is too short to stall).
  const file = await mirror({ size, seed, filename: 'stalled.bin', rate: 8 * MiB, faults: { stallAfterBytes: 4 * MiB, faultRequests: 2 } });
  // The shortest stall timeout the options allow: the test waits two of them.
  const { downloads, notices } = await clickWatched(file, { stallSeconds: 5 });

  // Chromium's pause holds the stalled connection, so its resume brings nothing: Stitch takes it over after two stall timeouts.
  const saved = await waitForFile(downloads, 'stalled.bin', size, 40_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  expect(await until('the notice', async () => (await notices()).at(0), 5_000)).toEqual({
    message: "The browser's download stopped getting data: Stitch took it over.",
    url: file.url,
  });
});

test('the watch outlives the service worker: stopped, then woken by the broken download, Stitch still rescues it, exact', async () => {
  const size = 48 * MiB;
  const seed = 66;
  // One rate for all connections: measured, the download stays with the browser.
  const file = await mirror({ size, seed, rate: 4 * MiB, filename: 'worker-stopped.bin' });
  const { tab, downloads, notices, jobs } = await clickWatched(file);
  await until('measured', () => measuringRequests(file, size)[0]?.endedAt !== undefined, 20_000);
  expect(await jobs()).toEqual([]);

  const cdp = await tab.context().newCDPSession(tab);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  // The browser's connection is cut and Chromium's own 5 resumes are too: only Stitch can finish it now.
  file.setFaults({ resetAfterMs: 300, faultRequests: 5 });
  file.dropConnections();

  // Once Stitch has taken it over, the rest of the transfer is not the subject: uncapped, it ends in a second, not in ~10 s.
  await until('Stitch to take the download over', async () => (await notices()).length > 0, 60_000);
  file.setRate(undefined);
  const saved = await waitForFile(downloads, 'worker-stopped.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  expect(await notices()).toEqual([
    { message: 'The browser tried to resume its download several times and got no further: Stitch took it over.', url: file.url },
  ]);
});

test('a watched download shows in the popup, in the browser, with growing progress; Take over makes Stitch finish it exact, and the browser’s own is gone', async () => {
  const size = 64 * MiB;
  const seed = 67;
  // One rate for all connections: measured, the download stays with the browser.
  const file = await mirror({ size, seed, rate: 4 * MiB, filename: 'watched-popup.bin' });
  const { browser, tab, downloads, notices, jobs } = await withDefaults([file.url]);
  const popup = await extensionPage(browser, 'popup.html');
  await expect.poll(() => popup.getByTestId('watched-list').isHidden(), { timeout: 5_000 }).toBe(true);
  await tab.click('#f0');

  const row = popup.getByTestId('watched-row');
  await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
  expect(await popup.getByTestId('watched-list').isVisible()).toBe(true);
  await expect.poll(() => row.getByTestId('watched-name').textContent(), { timeout: 2_000 }).toBe('watched-popup.bin');
  expect(await row.getByTestId('watched-state').textContent()).toBe('Downloading in the browser');
  const bar = row.getByTestId('watched-progress');
  const received = () => bar.evaluate((progress: HTMLProgressElement) => progress.value);
  expect(await bar.evaluate((progress: HTMLProgressElement) => progress.max)).toBe(size);
  const before = await received();
  await until('the bar to grow', async () => (await received()) > before, 5_000);
  await expect
    .poll(() => row.getByTestId('watched-figures').textContent(), { timeout: 5_000 })
    .toMatch(/^127\.0\.0\.1:\d+ · [\d.]+ MB of 64 MB \(\d+%\) · [\d.]+ [KM]B\/s$/);
  const downloadId = Number(await row.getAttribute('data-download-id'));
  expect(await received()).toBeLessThan(size);

  await row.getByTestId('watched-take-over').click();
  await expect.poll(() => row.count(), { timeout: 5_000 }).toBe(0);
  expect(await popup.getByTestId('watched-list').isHidden()).toBe(true);
  file.setRate(undefined); // taken over: uncapped, Stitch's download ends in a second, not in ~10 s
  const saved = await waitForFile(downloads, 'watched-popup.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  await until('Stitch’s job saved', async () => (await jobs()).find((j) => j.url === file.url && j.state === 'saved'), 10_000);
  expect((await jobs()).map((j) => j.takenOver)).toEqual([true]);
  // The browser's own download is gone from its list; the one left is Stitch's save.
  const search = (query: { id?: number }) =>
    popup.evaluate(
      (q) =>
        (globalThis as unknown as { chrome: { downloads: { search(q: object): Promise<{ url: string }[]> } } }).chrome.downloads.search(q),
      query,
    );
  expect(await search({ id: downloadId })).toEqual([]);
  expect((await search({})).filter((d) => d.url === file.url)).toEqual([]);
  expect(await notices()).toEqual([{ message: "Stitch took over the browser's download, as you asked.", url: file.url }]);
});
