import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { addonWithReachablePlayer, changeSettingsFrom, launchFirefox, openAddonPage } from './support/firefox';
import { fileSha256, until, waitForFile } from './support/files';
import { closedPort, linkPage, MiB, mirror, onCleanup } from './support/setup';

/**
 * Firefox smoke test: Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi, the
 * built add-on installed temporarily with _Always take over_ on, a link click taken over from a
 * server that resets every second (Firefox alone could not finish it) and requires the page's
 * Referer, and saved with the exact bytes.
 */
test('Firefox: the add-on takes over a download and saves the exact bytes', async () => {
  const size = 24 * MiB;
  const seed = 77;
  // Hotlink protection: 403 without the Referer of a page on localhost (another site than the file's).
  const server = await mirror({
    size,
    seed,
    filename: 'firefox.bin',
    rate: 12 * MiB,
    faults: { resetAfterMs: 1000 },
    requireReferer: /^http:\/\/localhost:\d+\//,
  });
  const page = new URL('downloads/page.html', await linkPage([{ id: 'f', href: server.url, text: 'file' }]));
  page.hostname = 'localhost';
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));

  const browser = await launchFirefox(downloads, onCleanup, { addonDir: addonWithReachablePlayer(onCleanup) });
  // The subject is Stitch's own download: Always take over on (by default this one would be measured, and watched).
  // WebDriver finds an add-on page only once it navigates within itself, as the player does with a clip.
  const clip = await mirror({ size: MiB, seed: 64, contentType: 'video/webm' });
  await changeSettingsFrom(await openAddonPage(browser, `player.html?url=${encodeURIComponent(clip.url)}`, onCleanup), {
    alwaysTakeOver: true,
  });

  const tab = await browser.newPage();
  await tab.goto(page.href);
  await tab.click('#f');

  const saved = await waitForFile(downloads, 'firefox.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Stitch asked for the first byte again before taking over, then resumed with ranges.
  expect(server.stats.requests.some((r) => r.range === 'bytes=0-0')).toBe(true);
  expect(server.stats.requests.some((r) => /bytes=[1-9]\d*-/.test(r.range ?? ''))).toBe(true);
  // Every request carried the Referer the browser sent itself (the page's origin): a session rule
  // sets it, since fetch from the background page cannot.
  expect(server.stats.requests.filter((r) => r.status === 403)).toEqual([]);
  for (const r of server.stats.requests) expect(r.referer, r.range ?? 'the browser').toBe(`${page.origin}/`);
});

test('Firefox: a server that cannot be reached is said plainly, with the attempts, not in the browser’s own words', async () => {
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, { addonDir: addonWithReachablePlayer(onCleanup) });
  const url = `http://127.0.0.1:${await closedPort()}/clip.webm`;
  const player = await openAddonPage(browser, `player.html?url=${encodeURIComponent(url)}`, onCleanup);
  // Firefox's fetch says "NetworkError when attempting to fetch resource." whatever broke.
  const said = await until(
    'the player to say why it waits',
    async () => {
      const text = await player.$eval('[data-testid="player-message"]', (el) => el.textContent ?? '');
      return text.includes('Attempt') ? text : undefined;
    },
    20_000,
  );
  expect(said).toMatch(
    /^Stitch could not reach the server: the connection was refused or broke before the server answered\. Attempt [1-7] of 8 failed; Stitch tries again by itself and gives up after attempt 8\.$/,
  );
});
