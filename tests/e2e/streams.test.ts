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
import { startStreamServer, type StreamServer, type StreamServerOptions } from '../support/stream-server';
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

/** A page titled `title` whose player fetches `manifest` (as hls.js and dash.js do), then marks itself #loaded. */
const watchPage = (title: string, manifest: string) => `<!doctype html><title>${title}</title><script>
  fetch('${manifest}').then((r) => r.text()).then(() => document.body.append(Object.assign(document.createElement('p'), { id: 'loaded' })));
</script>`;

/**
 * A stream server of `root` (with `files`), and Chromium with Stitch whose popup is open (its worker's
 * listeners in place) before a tab loads `path` of it.
 */
async function chromiumOnPage(root: string, files: StreamServerOptions['files'], path: string) {
  const server = await startStreamServer({ root, files });
  onCleanup(() => server.close());
  const p = profile();
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.getByTestId('empty').waitFor();
  const tab = await browser.context.newPage();
  await tab.goto(`${server.origin}${path}`);
  await tab.locator('#loaded').waitFor({ state: 'attached' });
  return { server, p, popup };
}

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
  const { server, p, popup } = await chromiumOnPage(dash.dir, { '/watch.html': watchPage('Episode 2', 'manifest.mpd') }, '/watch.html');

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

/**
 * A live playlist over the variant v2's segments: a window of the last four published, one more
 * every second (a target duration of 1 s) from `begin()` on (the first four until then: a slow
 * browser would otherwise find the stream's last segments only), never ending while the test runs.
 */
function livePlaylist(): { playlist: () => string; segments: Buffer[]; begin: () => void } {
  const names = readFileSync(join(made.dir, 'v2/index.m3u8'), 'utf8')
    .split('\n')
    .filter((line) => line.endsWith('.ts'));
  let started: number | undefined;
  const playlist = () => {
    const published = started === undefined ? 0 : Math.floor((Date.now() - started) / 1000);
    const end = Math.min(names.length, 4 + published);
    const start = Math.max(0, end - 4);
    const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:1', `#EXT-X-MEDIA-SEQUENCE:${start}`];
    for (let i = start; i < end; i++) lines.push('#EXTINF:2.0,', `v2/${names[i]}`);
    return `${lines.join('\n')}\n`;
  };
  const begin = () => {
    started ??= Date.now();
  };
  return { playlist, segments: names.map((name) => readFileSync(join(made.dir, 'v2', name))), begin };
}

/** `saved` is at least `least` of `segments`, whole and in order, from wherever the recording began. */
function expectWholeSegments(saved: Buffer, segments: readonly Buffer[], least: number): void {
  const first = segments.findIndex((segment) => saved.subarray(0, segment.length).equals(segment));
  expect(first).toBeGreaterThanOrEqual(0);
  let end = first;
  let length = 0;
  while (length < saved.length && end < segments.length) length += segments[end++]!.length;
  expect(saved.equals(Buffer.concat(segments.slice(first, end)))).toBe(true);
  expect(end - first).toBeGreaterThanOrEqual(least);
}

test('Chromium: a live stream is recorded from the popup until Stop, and what was recorded is saved: whole segments in order', async () => {
  const live = livePlaylist();
  const { p, popup } = await chromiumOnPage(
    made.dir,
    { '/live.m3u8': live.playlist, '/live.html': watchPage('Live now', 'live.m3u8') },
    '/live.html',
  );

  const row = popup.getByTestId('stream-row');
  const figures = row.getByTestId('stream-figures');
  await expect.poll(() => figures.textContent(), { timeout: 15_000 }).toMatch(/^Live · 127.0.0.1:\d+$/);
  expect(await row.getByTestId('stream-download').isVisible()).toBe(false);
  live.begin();
  await row.getByTestId('stream-record').click();
  // Three segments before the live edge, then one more a second: at least 10 s of video.
  await expect.poll(() => figures.textContent(), { timeout: 20_000 }).toMatch(/Recording: (1\d|[2-9]\d) sec, /);
  await row.getByTestId('stream-stop').click();

  expectWholeSegments(readFileSync(await waitForFile(p.downloads, 'Live now.ts', undefined, 30_000)), live.segments, 5);
  expect(probedSeconds(join(p.downloads, 'Live now.ts'))).toBeGreaterThan(9);
  // Said, and the row is a live stream again, ready to record anew.
  await expect
    .poll(() => popup.locator('body').innerText(), { timeout: 10_000 })
    .toMatch(/Saved the recording Live now\.ts \(\d+ sec of video, [\d.]+ MB\)\./);
  await expect.poll(() => row.getByTestId('stream-record').isVisible(), { timeout: 10_000 }).toBe(true);
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

test('Firefox: a live stream is recorded from the popup until Stop, and saved as whole segments in order', async () => {
  const live = livePlaylist();
  const files = { '/live.m3u8': live.playlist, '/live.html': watchPage('Live now', 'live.m3u8') };
  const server = await startStreamServer({ root: made.dir, files });
  onCleanup(() => server.close());
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, { addonDir: addonWithReachablePlayer(onCleanup) });
  const tab = await browser.newPage();
  await tab.goto(`${server.origin}/live.html`);
  await tab.waitForSelector('#loaded');
  const ui = await openAddonPage(browser, `player.html?url=${encodeURIComponent(`${server.origin}/v2/seg0.ts`)}`, onCleanup);
  await showPopupIn(ui);
  const inPopup = <T>(read: (popup: Document) => T) =>
    ui.evaluate(`(${read.toString()})(document.querySelector('#popup').contentDocument)`) as Promise<T>;
  const figures = () =>
    inPopup((d) => d.querySelector('[data-testid="stream-row"][data-url$="live.m3u8"] [data-testid="stream-figures"]')?.textContent ?? '');
  await expect.poll(figures, { timeout: 15_000 }).toMatch(/^Live · /);
  live.begin();
  await inPopup((d) => d.querySelector<HTMLButtonElement>('[data-url$="live.m3u8"] [data-testid="stream-record"]')?.click());
  await expect.poll(figures, { timeout: 20_000 }).toMatch(/Recording: (1\d|[2-9]\d) sec, /);
  await inPopup((d) => d.querySelector<HTMLButtonElement>('[data-url$="live.m3u8"] [data-testid="stream-stop"]')?.click());

  expectWholeSegments(readFileSync(await waitForFile(downloads, 'Live now.ts', undefined, 30_000)), live.segments, 5);
});
