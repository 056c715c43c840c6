import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import type { Mirror } from '../support/mirror-server';
import { request } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { browserWith, changeSettings, linkPage, MiB, mirror, profile } from './support/setup';

/** Chromium with Always take over off, after a click on a link to `file`: a plain download it leaves with the browser, watched. */
async function clickWatched(file: Mirror) {
  // The link page first: cleanup closes the browser, and its open connections, before the page's server.
  const page = await linkPage([{ id: 'file', href: file.url, text: 'file' }]);
  const p = profile();
  const browser = await browserWith(p);
  const ui = await changeSettings(browser, { alwaysTakeOver: false });
  const tab = await browser.context.newPage();
  await tab.goto(page);
  await tab.click('#file');
  const notices = async () => (await request(ui, { type: 'list-jobs' })).value!.notices.map(({ message, url }) => ({ message, url }));
  return { downloads: p.downloads, notices };
}

test('a watched download Chromium gives up on after its own 5 resumes is taken over by Stitch and ends exact', async () => {
  const size = 24 * MiB;
  const seed = 61;
  // The browser's request, Stitch's 1-byte probe and Chromium's 5 resumes: all reset.
  const file = await mirror({ size, seed, filename: 'watched.bin', rate: 8 * MiB, faults: { resetAfterMs: 300, faultRequests: 7 } });
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
  const { downloads, notices } = await clickWatched(file);

  // Chromium's pause holds the stalled connection, so its resume brings nothing: Stitch takes it over after two stall timeouts.
  const saved = await waitForFile(downloads, 'stalled.bin', size, 90_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  expect(await until('the notice', async () => (await notices()).at(0), 5_000)).toEqual({
    message: "The browser's download stopped getting data: Stitch took it over.",
    url: file.url,
  });
});
