/**
 * Issue 30: a video stream a page plays is found without reading the page (webRequest sees its
 * player load the playlists), listed in the popup with its picture size and duration, and saved
 * as one file: exact against ffmpeg's own segments, and read by ffprobe to its full duration.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { startStreamServer, type StreamServer } from '../support/stream-server';
import { DASH, dashTrackBytes, expectedBytes, packets, probedSeconds, stream, TS_VARIANTS, type MadeStream } from '../support/streams';
import { extensionPage } from './support/chromium';
import { fileSha256, waitForFile } from './support/files';
import { addonWithReachablePlayer, launchFirefox, openAddonPage, showPopupIn } from './support/firefox';
import { browserWith, onCleanup, profile } from './support/setup';

let made: MadeStream;
let expected: Buffer;
beforeAll(async () => {
  made = await stream(TS_VARIANTS);
  expected = expectedBytes(made, 2);
}, 180_000);

/** A page whose player loads the stream's playlists (as hls.js does, with fetch), titled as the saved file will be. */
const WATCH_PAGE = `<!doctype html><title>Episode 1</title><p>Playing</p>
<script>
  fetch('master.m3u8').then((r) => r.text()).then(() => fetch('v2/index.m3u8')).then((r) => r.text())
    .then(() => document.body.append(Object.assign(document.createElement('p'), { id: 'loaded', textContent: 'loaded' })));
</script>`;

async function streamSite(): Promise<StreamServer> {
  const server = await startStreamServer({ root: made.dir, files: { '/watch.html': WATCH_PAGE } });
  onCleanup(() => server.close());
  return server;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

test('Chromium: the popup lists the stream a page loads with its qualities; Download saves the one chosen as one exact .ts', async () => {
  const server = await streamSite();
  const p = profile();
  const browser = await browserWith(p);
  // Stitch runs before the user opens a video page: its worker's listeners are in place.
  const popup = await extensionPage(browser, 'popup.html');
  await popup.getByTestId('empty').waitFor();
  const tab = await browser.context.newPage();
  await tab.goto(`${server.origin}/watch.html`);
  await tab.locator('#loaded').waitFor();

  const row = popup.getByTestId('stream-row');
  await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
  await expect
    .poll(() => row.getByTestId('stream-figures').textContent(), { timeout: 15_000 })
    .toMatch(/^640×360 · 30 sec · about 2.6 MB · 127.0.0.1:\d+$/);
  expect(await row.getByTestId('stream-title').textContent()).toBe('Episode 1');
  expect(await row.getAttribute('data-url')).toBe(`${server.origin}/master.m3u8`);
  const qualities = row.getByTestId('stream-variant');
  expect(await qualities.locator('option').allTextContents()).toEqual([
    expect.stringMatching(/^640×360 · about 2\.6 MB$/),
    expect.stringMatching(/^480×270 · about /),
    expect.stringMatching(/^320×180 · about /),
  ]);
  await qualities.selectOption({ index: 2 });
  await row.getByTestId('stream-download').click();

  const lowest = expectedBytes(made, 0);
  const saved = await waitForFile(p.downloads, 'Episode 1.ts', lowest.length, 60_000);
  expect(await fileSha256(saved)).toBe(sha256(lowest));
  expect(probedSeconds(saved)).toBeGreaterThan(29);
  // The chosen variant only: the others' segments were never asked for.
  expect(server.requests.filter((r) => /^\/v[12]\/seg/.test(r.path))).toEqual([]);
});

test('Chromium: a DASH stream a page loads is listed with its qualities; the one chosen is saved with its sound as one MP4', async () => {
  const dash = await stream(DASH);
  // A page whose player (as dash.js does) fetches the manifest.
  const page = `<!doctype html><title>Episode 2</title><script>
    fetch('manifest.mpd').then((r) => r.text()).then(() => document.body.append(Object.assign(document.createElement('p'), { id: 'loaded' })));
  </script>`;
  const server = await startStreamServer({ root: dash.dir, files: { '/watch.html': page } });
  onCleanup(() => server.close());
  const p = profile();
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.getByTestId('empty').waitFor();
  const tab = await browser.context.newPage();
  await tab.goto(`${server.origin}/watch.html`);
  await tab.locator('#loaded').waitFor({ state: 'attached' });

  const row = popup.getByTestId('stream-row');
  await expect
    .poll(() => row.getByTestId('stream-figures').textContent(), { timeout: 15_000 })
    .toMatch(/^640×360 · 30 sec · about [\d.]+ MB · 127.0.0.1:\d+$/);
  expect(await row.getAttribute('data-url')).toBe(`${server.origin}/manifest.mpd`);
  const qualities = row.getByTestId('stream-variant');
  expect(await qualities.locator('option').allTextContents()).toEqual([
    expect.stringMatching(/^640×360 · about /),
    expect.stringMatching(/^320×180 · about /),
  ]);
  await qualities.selectOption({ index: 1 });
  await row.getByTestId('stream-download').click();

  const saved = await waitForFile(p.downloads, 'Episode 2.mp4', undefined, 60_000);
  // Representation 0 is the 320×180 picture, 2 the sound: every packet of both, as ffmpeg wrote them.
  writeFileSync(join(p.dir, 'picture.mp4'), dashTrackBytes(dash, 0));
  writeFileSync(join(p.dir, 'sound.mp4'), dashTrackBytes(dash, 2));
  expect(packets(saved, '0:v')).toEqual(packets(join(p.dir, 'picture.mp4'), '0:v'));
  expect(packets(saved, '0:a')).toEqual(packets(join(p.dir, 'sound.mp4'), '0:a'));
  expect(server.requests.filter((r) => r.path.startsWith('/chunk-stream1-'))).toEqual([]);
});

test('Chromium: a live stream is listed with why it cannot be downloaded', async () => {
  const live = '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:40\n#EXTINF:2,\nv2/seg0.ts\n#EXTINF:2,\nv2/seg1.ts\n';
  const page = `<!doctype html><title>Live now</title><script>
    fetch('live.m3u8').then((r) => r.text()).then(() => document.body.append(Object.assign(document.createElement('p'), { id: 'loaded' })));
  </script>`;
  const server = await startStreamServer({ root: made.dir, files: { '/live.m3u8': live, '/live.html': page } });
  onCleanup(() => server.close());
  const browser = await browserWith(profile());
  const popup = await extensionPage(browser, 'popup.html');
  await popup.getByTestId('empty').waitFor();
  const tab = await browser.context.newPage();
  await tab.goto(`${server.origin}/live.html`);
  await tab.locator('#loaded').waitFor({ state: 'attached' });
  const refused = popup.getByTestId('stream-row').getByTestId('stream-refused');
  await expect.poll(() => refused.textContent(), { timeout: 15_000 }).toBe('It is a live stream: Stitch cannot record live streams yet.');
  expect(await popup.getByTestId('stream-download').isVisible()).toBe(false);
});

test('Firefox: the popup lists the stream a page loads, and Download saves it as one exact .ts', async () => {
  const server = await streamSite();
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, { addonDir: addonWithReachablePlayer(onCleanup) });
  const tab = await browser.newPage();
  await tab.goto(`${server.origin}/watch.html`);
  await tab.waitForSelector('#loaded');
  // WebDriver finds an add-on page only once it navigates within itself, as the player does; the
  // popup is shown in a frame of it (the same origin), as it would render in its own window.
  const ui = await openAddonPage(browser, `player.html?url=${encodeURIComponent(`${server.origin}/v2/seg0.ts`)}`, onCleanup);
  await showPopupIn(ui);
  const inPopup = <T>(read: (popup: Document) => T) =>
    ui.evaluate(`(${read.toString()})(document.querySelector('#popup').contentDocument)`) as Promise<T>;
  await expect
    .poll(() => inPopup((d) => d.querySelector('[data-testid="stream-figures"]')?.textContent ?? ''), { timeout: 15_000 })
    .toMatch(/^640×360 · 30 sec · about 2.6 MB · 127.0.0.1:\d+$/);
  expect(await inPopup((d) => d.querySelector('[data-testid="stream-title"]')?.textContent)).toBe('Episode 1');
  await inPopup((d) => d.querySelector<HTMLButtonElement>('[data-testid="stream-download"]')?.click());

  const saved = await waitForFile(downloads, 'Episode 1.ts', expected.length, 60_000);
  expect(readFileSync(saved).equals(expected)).toBe(true);
  expect(probedSeconds(saved)).toBeGreaterThan(29);
});
