import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import type { Mirror } from '../support/mirror-server';
import { addonWithReachablePlayer, askBackground, launchFirefox, openAddonPage } from './support/firefox';
import { fileSha256, waitForFile } from './support/files';
import { linkPage, MiB, mirror, onCleanup } from './support/setup';

/**
 * Firefox with Always take over off, after a click on a link to `file`: a plain download it leaves
 * with the browser, watched. `background` asks what the popup would; the player's own job is its one.
 */
async function clickWatched(file: Mirror) {
  const page = await linkPage([{ id: 'f', href: file.url, text: 'file' }]);
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, { addonDir: addonWithReachablePlayer(onCleanup) });
  // Any add-on page talks to the background as the popup does: the player is the one a test can open,
  // and WebDriver finds it again only once it plays something.
  const clip = await mirror({ size: MiB, seed: 64, contentType: 'video/webm' });
  const ui = await openAddonPage(browser, `player.html?url=${encodeURIComponent(clip.url)}`, onCleanup);
  const background = askBackground(ui);
  const { settings } = (await background({ type: 'get-settings' })).value!;
  expect((await background({ type: 'set-settings', settings: { ...settings, alwaysTakeOver: false } })).ok).toBe(true);
  const tab = await browser.newPage();
  await tab.goto(page);
  await tab.click('#f');
  const stitchTook = async () => {
    const { jobs, notices } = (await background({ type: 'list-jobs' })).value!;
    return { jobs: jobs.map((j) => j.url).filter((url) => url !== clip.url), notices };
  };
  return { downloads, stitchTook };
}

/** Firefox's own requests for the rest of the file after a break: `bytes=N-` (not the start probe's measuring one, from the middle). */
const resumes = (file: Mirror, size: number) =>
  file.stats.requests.filter((r) => /^bytes=[1-9]\d*-$/.test(r.range ?? '') && r.range !== `bytes=${size / 2}-`).length;

test('Firefox: a watched download broken by resets is resumed by Stitch (Firefox never retries by itself) and ends exact', async () => {
  const size = 24 * MiB;
  const seed = 63;
  // Four responses reset: the browser's request, Stitch's 1-byte probe (too short to be cut) and the first resumes.
  const file = await mirror({ size, seed, filename: 'watched-ff.bin', rate: 8 * MiB, faults: { resetAfterMs: 400, faultRequests: 4 } });
  const { downloads, stitchTook } = await clickWatched(file);

  const saved = await waitForFile(downloads, 'watched-ff.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Firefox's own download finished it, resumed with ranges for the rest; Stitch took nothing over.
  expect(resumes(file, size)).toBeGreaterThanOrEqual(2);
  expect(await stitchTook()).toEqual({ jobs: [], notices: [] });
});

test("Firefox: a watched download whose server stops sending is paused and resumed, and Firefox's fresh request ends it exact", async () => {
  const size = 24 * MiB;
  const seed = 65;
  // The browser's request stalls after 4 MiB (Stitch's 1-byte probe, the second request, is too short to stall).
  const file = await mirror({
    size,
    seed,
    filename: 'stalled-ff.bin',
    rate: 8 * MiB,
    faults: { stallAfterBytes: 4 * MiB, faultRequests: 2 },
  });
  const { downloads, stitchTook } = await clickWatched(file);

  const saved = await waitForFile(downloads, 'stalled-ff.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  expect(resumes(file, size)).toBe(1);
  expect(await stitchTook()).toEqual({ jobs: [], notices: [] });
});
