import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { expect, test } from 'vitest';
import { EXTENSION_DIR } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { videoFixture } from './support/player';
import { mirror, onCleanup } from './support/setup';

const FIREFOX = process.env.STITCH_FIREFOX ?? '/usr/bin/firefox-esr';
const ADDON_ID = 'stitch@stitch.invalid';
const ADDON_UUID = '5e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';

/**
 * A copy of the built add-on whose player page is web-accessible: Firefox refuses to navigate
 * to moz-extension:// from WebDriver or from a page's script, but follows a loopback server's
 * redirect to a web-accessible page. Test-only: the product's player is not web-accessible.
 */
function addonWithReachablePlayer(): string {
  const dir = mkdtempSync(join(tmpdir(), 'stitch-ff-addon-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(EXTENSION_DIR, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest.web_accessible_resources = [{ resources: ['player.html'], matches: ['http://127.0.0.1/*'] }];
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

/** A loopback URL that redirects to `target`. */
async function redirectTo(target: string): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(302, { Location: target });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onCleanup(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/**
 * Opens an add-on page through a loopback redirect. Firefox moves the tab to the add-on's
 * process on the way and WebDriver may lose the frame it navigated ("Frame detached"); the
 * page shows up again among the browser's pages once it navigates within itself (the player
 * replaces ?url= with ?id= when it has its job).
 */
async function openAddonPage(browser: Browser, path: string): Promise<Page> {
  const target = `moz-extension://${ADDON_UUID}/${path}`;
  const tab = await browser.newPage();
  void tab.goto(await redirectTo(target)).catch(() => {});
  return until(
    `the add-on page ${path}`,
    async () => [tab, ...(await browser.pages())].find((p) => p.url().startsWith(`moz-extension://${ADDON_UUID}/${path.split('?')[0]}`)),
    20_000,
  );
}

/** Debian's firefox-esr with the add-on installed, saving downloads to `downloads`. */
async function launchFirefox(downloads: string): Promise<Browser> {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    extraPrefsFirefox: {
      'extensions.webextensions.uuids': JSON.stringify({ [ADDON_ID]: ADDON_UUID }),
      'browser.download.dir': downloads,
      'browser.download.folderList': 2,
      'browser.download.useDownloadDir': true,
      'browser.download.always_ask_before_handling_new_types': false,
      'browser.download.start_downloads_in_tmp_dir': false,
      'media.autoplay.default': 0,
    },
  });
  onCleanup(() => browser.close());
  await browser.installExtension(addonWithReachablePlayer());
  await new Promise((r) => setTimeout(r, 1000));
  return browser;
}

const currentTime = (page: Page) => page.evaluate(() => document.querySelector('video')?.currentTime ?? 0);

/**
 * Firefox: no service worker in extension pages, so the player feeds Media Source Extensions
 * from the stored bytes (WebM: the head, then whole Clusters). Debian's firefox-esr, driven by
 * puppeteer-core over WebDriver BiDi.
 */
test('Firefox: the player plays a WebM through Media Source while it downloads, and seeks ahead', async () => {
  const video = videoFixture();
  const size = video.bytes.length;
  const bitrate = size / video.durationSeconds;
  const server = await mirror({ size, body: video.bytes, contentType: 'video/webm', filename: 'progressive.webm', rate: Math.round(bitrate * 1.5) });
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));

  const browser = await launchFirefox(downloads);

  const t0 = Date.now();
  const player = await openAddonPage(browser, `player.html?url=${encodeURIComponent(server.url)}`);
  await until('playback', async () => (await currentTime(player).catch(() => 0)) > 0.5, 30_000, 100).catch(async (error: unknown) => {
    console.log(player.url(), await player.evaluate(() => document.body.innerText).catch(String));
    throw error;
  });
  const firstPlayMs = Date.now() - t0;
  const atFirstPlay = server.stats.bytesSent / size;
  expect(await player.$eval('[data-testid="player-route"]', (el) => el.getAttribute('data-route'))).toBe('mse');
  // With the default settings (4 connections, 1 MiB blocks) the first bytes come late on this
  // slow server (see the Chromium test): the check is that it plays before the end.
  expect(atFirstPlay).toBeLessThan(0.8);

  // A seek ahead: the feeder reads the Cues at the end, then appends from the Cluster at 32 s.
  const atSeek = server.stats.bytesSent / size;
  const seekStart = Date.now();
  await player.evaluate(() => {
    document.querySelector('video')!.currentTime = 32;
  });
  await until('playing after the seek', async () => (await currentTime(player)) > 32.3, 30_000, 100);
  const seekMs = Date.now() - seekStart;
  expect(server.stats.bytesSent).toBeLessThan(size);

  const saved = await waitForFile(downloads, 'progressive.webm', size, 60_000);
  expect(await fileSha256(saved)).toBe(video.sha256);
  console.log(
    `Firefox (Media Source route): playing ${firstPlayMs} ms after opening the player (at ${Math.round(atFirstPlay * 100)} % downloaded); ` +
      `a seek to 80 % played after ${seekMs} ms (at ${Math.round(atSeek * 100)} % downloaded)`,
  );
});

/**
 * Firefox, plain MP4 with the moov at the end (as ffmpeg writes it by default): the player
 * reads the head, asks for the moov (the engine fetches it first), and mp4box remuxes the mdat
 * into fragments as it is stored. The same checks as the WebM test: it plays before the end,
 * a seek ahead plays, and the saved file is exact.
 */
test('Firefox: the player plays a plain MP4 (moov at the end) through mp4box while it downloads, and seeks ahead', async () => {
  const video = videoFixture('plain-progressive.mp4');
  const durationSeconds = 30;
  const size = video.bytes.length;
  const bitrate = size / durationSeconds;
  const server = await mirror({ size, body: video.bytes, contentType: 'video/mp4', filename: 'plain-progressive.mp4', rate: Math.round(bitrate * 1.5) });
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads);

  const t0 = Date.now();
  const player = await openAddonPage(browser, `player.html?url=${encodeURIComponent(server.url)}`);
  await until('playback', async () => (await currentTime(player).catch(() => 0)) > 0.5, 30_000, 100).catch(async (error: unknown) => {
    console.log(player.url(), await player.evaluate(() => document.body.innerText).catch(String));
    throw error;
  });
  const firstPlayMs = Date.now() - t0;
  const atFirstPlay = server.stats.bytesSent / size;
  expect(await player.$eval('[data-testid="player-route"]', (el) => el.getAttribute('data-route'))).toBe('mse');
  expect(atFirstPlay).toBeLessThan(0.8);

  const atSeek = server.stats.bytesSent / size;
  const seekStart = Date.now();
  await player.evaluate(() => {
    document.querySelector('video')!.currentTime = 24;
  });
  await until('playing after the seek', async () => (await currentTime(player)) > 24.3, 30_000, 100).catch(async (error: unknown) => {
    console.log(await player.evaluate(() => `${document.body.innerText} currentTime ${document.querySelector('video')!.currentTime}`).catch(String));
    throw error;
  });
  const seekMs = Date.now() - seekStart;
  const atSeekPlayed = server.stats.bytesSent / size;

  const saved = await waitForFile(downloads, 'plain-progressive.mp4', size, 60_000);
  expect(await fileSha256(saved)).toBe(video.sha256);
  console.log(
    `Firefox (plain MP4 remuxed by mp4box): playing ${firstPlayMs} ms after opening the player (at ${Math.round(atFirstPlay * 100)} % downloaded); ` +
      `a seek to 80 % played after ${seekMs} ms (asked at ${Math.round(atSeek * 100)} %, playing at ${Math.round(atSeekPlayed * 100)} % downloaded)`,
  );
});
