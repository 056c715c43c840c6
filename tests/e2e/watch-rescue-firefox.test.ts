import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { ReplyOf, RequestOf, RequestType } from '../../src/messages';
import { contentSha256 } from '../support/content';
import { addonWithReachablePlayer, launchFirefox, openAddonPage } from './support/firefox';
import { fileSha256, waitForFile } from './support/files';
import { linkPage, MiB, mirror, onCleanup } from './support/setup';

test('Firefox: a watched download broken by resets is resumed by Stitch (Firefox never retries by itself) and ends exact', async () => {
  const size = 24 * MiB;
  const seed = 63;
  // Four responses reset: the browser's request, Stitch's 1-byte probe (too short to be cut) and the first resumes.
  const file = await mirror({ size, seed, filename: 'watched-ff.bin', rate: 8 * MiB, faults: { resetAfterMs: 400, faultRequests: 4 } });
  const page = await linkPage([{ id: 'f', href: file.url, text: 'file' }]);
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, { addonDir: addonWithReachablePlayer(onCleanup) });
  // Any add-on page talks to the background as the popup does: the player is the one a test can open,
  // and WebDriver finds it again only once it plays something.
  const clip = await mirror({ size: MiB, seed: 64, contentType: 'video/webm' });
  const ui = await openAddonPage(browser, `player.html?url=${encodeURIComponent(clip.url)}`, onCleanup);
  const ask = <T extends RequestType>(message: RequestOf<T>) =>
    ui.evaluate(
      (m) =>
        (globalThis as unknown as { browser: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).browser.runtime.sendMessage(m),
      message,
    ) as Promise<{ ok: boolean; value?: ReplyOf<T> }>;
  const { settings } = (await ask({ type: 'get-settings' })).value!;
  expect((await ask({ type: 'set-settings', settings: { ...settings, alwaysTakeOver: false } })).ok).toBe(true);

  const tab = await browser.newPage();
  await tab.goto(page);
  await tab.click('#f');

  const saved = await waitForFile(downloads, 'watched-ff.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Firefox's own download finished it, resumed with ranges for the rest; Stitch took nothing over.
  expect(file.stats.requests.filter((r) => /^bytes=[1-9]\d*-$/.test(r.range ?? '')).length).toBeGreaterThanOrEqual(2);
  const { jobs, notices } = (await ask({ type: 'list-jobs' })).value!;
  expect({ jobs: jobs.map((j) => j.url), notices }).toEqual({ jobs: [clip.url], notices: [] });
});
