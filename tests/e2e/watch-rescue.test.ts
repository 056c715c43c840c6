import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { fileSha256, until, waitForFile } from './support/files';
import { extensionPage } from './support/chromium';
import { MiB, mirror } from './support/setup';
import { chromiumWithDefaults, clickWatchedInChromium, measuringRequests } from './support/watched';

test('a watched download Chromium gives up on after its own 5 resumes is taken over by Stitch and ends exact', async () => {
  const size = 24 * MiB;
  const seed = 61;
  // The browser's request, Stitch's 1-byte probe, its measuring request (Chromium's own resumes keep the download
  // in progress meanwhile) and Chromium's 5 resumes: all reset.
  const file = await mirror({ size, seed, filename: 'watched.bin', rate: 8 * MiB, faults: { resetAfterMs: 300, faultRequests: 8 } });
  const { downloads, notices } = await clickWatchedInChromium(file);

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
  const { downloads, notices } = await clickWatchedInChromium(file, { stallSeconds: 5 });

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
  const { tab, downloads, notices, jobs } = await clickWatchedInChromium(file);
  await until('measured', () => measuringRequests(file, size)[0]?.endedAt !== undefined, 20_000);
  // The rest must outlast the steps below however long the measured start took under load.
  file.setRate(MiB);
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
  const { browser, tab, downloads, notices, jobs } = await chromiumWithDefaults([file.url]);
  const popup = await extensionPage(browser, 'popup.html');
  await expect.poll(() => popup.getByTestId('watched-list').isHidden(), { timeout: 5_000 }).toBe(true);
  await tab.click('#f0');

  const row = popup.getByTestId('watched-row');
  await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
  // Watched. The rest must outlast the test's steps however long the measured start took under load.
  file.setRate(MiB);
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
