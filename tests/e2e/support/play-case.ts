/**
 * A playback case (issue 26): a clip served the way a user meets it, and the four players that
 * play it: Stitch's player and the browser's own <video>, in Chromium and in Firefox. Shared by
 * the playback benchmark (bench/play.ts) and the e2e seek tests; every helper takes the step that
 * undoes what it set up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Request as PlaywrightRequest } from 'playwright-core';
import { STREAM_PATH } from '../../../src/messages';
import { clipServed, type Clip } from '../../support/clips';
import type { Mirror, MirrorOptions } from '../../support/mirror-server';
import { CHROMIUM, extensionPage, launchWithExtension, makeProfile, streamRouteReady } from './chromium';
import { addonWithReachablePlayer, launchFirefox, openAddonPage, type Cleanup } from './firefox';
import { startFirefox } from './firefox-launch';
import type { AnyPage } from './player';
import { closeServer } from './link-page';

/** How the clip is served: `count` servers of it, each at `speed` × its mean bitrate. */
export interface ServerSetup {
  speed: number;
  count: number;
  /** A far server: this delay before each response's headers, and TCP slow start over that round trip. */
  latencyMs?: number;
}

export const SERVER_SETUPS = {
  '2x': { speed: 2, count: 1 },
  '1.3x': { speed: 1.3, count: 1 },
  /** Two mirrors, neither fast enough alone: the first announces the second (Link rel=duplicate, with a digest). */
  mirrors: { speed: 0.75, count: 2 },
  /** One server 300 ms away, at 2× (a slow start takes a few round trips to reach that). */
  far: { speed: 2, count: 1, latencyMs: 300 },
} satisfies Record<string, ServerSetup>;

export type ServerSetupId = keyof typeof SERVER_SETUPS;

/** Each server's rate in bytes/s. */
export const serverRate = (media: Clip, setup: ServerSetup) => Math.round((media.size / media.durationSeconds) * setup.speed);

/**
 * Starts the case's servers, fresh (new ports: no browser cache applies); the first one is the
 * URL the player gets, and announces the others with `Link: <…>; rel=duplicate` and the clip's
 * `Repr-Digest`. `start` starts one server (the e2e tests' `mirror`, which cleans up after itself).
 */
export async function serveClip(media: Clip, setup: ServerSetup, start: (options: MirrorOptions) => Promise<Mirror>): Promise<Mirror[]> {
  const served = clipServed(media);
  const far = setup.latencyMs === undefined ? {} : { latencyMs: setup.latencyMs, slowStart: true };
  const serve = (extraHeaders?: Record<string, string>) => start({ ...served, rate: serverRate(media, setup), extraHeaders, ...far });
  const others: Mirror[] = [];
  for (let i = 1; i < setup.count; i++) others.push(await serve());
  const announce = others.length
    ? {
        'Repr-Digest': `sha-256=:${Buffer.from(media.sha256, 'hex').toString('base64')}:`,
        Link: others.map((m) => `<${m.url}>; rel=duplicate`).join(', '),
      }
    : undefined;
  return [await serve(announce), ...others];
}

/**
 * A loopback page with the browser's own <video src=…>, started as Stitch's player starts its
 * own: with play() (the autoplay attribute alone waits for HAVE_ENOUGH_DATA, which never comes
 * while a server sends slower than the bitrate), and marking its first frame as the player does.
 */
async function ownVideoPage(mediaUrl: string, cleanup: Cleanup): Promise<string> {
  const html = `<!doctype html><video controls autoplay preload="auto" src="${mediaUrl}"></video><script>
    const v = document.querySelector('video');
    const mark = () => performance.getEntriesByName('stitch:first-frame').length === 0 && performance.mark('stitch:first-frame');
    if ('requestVideoFrameCallback' in v) v.requestVideoFrameCallback(mark);
    v.addEventListener('playing', () => (v.videoWidth === 0 || !('requestVideoFrameCallback' in v)) && mark(), { once: true });
    v.play().catch(() => {});
  </script>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(html));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup(() => closeServer(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

export type PlayBrowser = 'chromium' | 'firefox';

/**
 * Autoplay allowed; and a mock sound device: on a machine without one (CI, this bed) Firefox's
 * audio sink fails ("Failed to decode media" from the start) and an audio-only element never
 * plays again after a seek, its own <video> as much as Stitch's player. With the mock device it
 * plays as on a user's machine.
 */
const FIREFOX_PREFS = { 'media.autoplay.default': 0, 'media.cubeb.force_mock_context': true };

/** The browser's own <video> on `mediaUrl`, in a fresh headless browser. */
export async function openOwnVideo(browser: PlayBrowser, mediaUrl: string, cleanup: Cleanup): Promise<AnyPage> {
  return openInFreshBrowser(browser, await ownVideoPage(mediaUrl, cleanup), cleanup);
}

/** `url` in a fresh headless browser with no extension, playing media as on a user's machine (autoplay, a sound device). */
export async function openInFreshBrowser(browser: PlayBrowser, url: string, cleanup: Cleanup): Promise<AnyPage> {
  if (browser === 'chromium') {
    const launched = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required'],
    });
    cleanup(() => launched.close());
    const page = await launched.newPage();
    await page.goto(url);
    return page;
  }
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-play-own-'));
  cleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const launched = await startFirefox(downloads, { prefs: FIREFOX_PREFS });
  cleanup(() => launched.close());
  const page = await launched.newPage();
  await page.goto(url);
  return page;
}

/** A range request of the media element to Stitch's stream route (Chromium): when it was made and when its response ended. */
export interface ElementRequest {
  at: number;
  range: string;
  status?: number;
  endedAt?: number;
  failed?: string;
}

/**
 * Stitch's player (player.html?url=…) on `mediaUrl`, in a fresh headless browser with the built
 * extension; `downloads` is where it saves. In Chromium, `elementRequests` collects what the
 * <video> asked the service worker's stream route (times from Date.now()).
 */
export async function openStitchPlayer(
  browser: PlayBrowser,
  mediaUrl: string,
  cleanup: Cleanup,
): Promise<{ page: AnyPage; downloads: string; elementRequests: ElementRequest[] }> {
  const path = `player.html?url=${encodeURIComponent(mediaUrl)}`;
  const elementRequests: ElementRequest[] = [];
  if (browser === 'chromium') {
    const profile = makeProfile();
    cleanup(() => profile.remove());
    const launched = await launchWithExtension(profile);
    cleanup(() => launched.close());
    await streamRouteReady(launched);
    const seen = new Map<PlaywrightRequest, ElementRequest>();
    launched.context.on('request', (request) => {
      if (!request.url().includes(STREAM_PATH)) return;
      const entry: ElementRequest = { at: Date.now(), range: request.headers().range ?? 'whole' };
      seen.set(request, entry);
      elementRequests.push(entry);
    });
    launched.context.on('response', (response) => {
      const entry = seen.get(response.request());
      if (entry) entry.status = response.status();
    });
    launched.context.on('requestfinished', (request) => {
      const entry = seen.get(request);
      if (entry) entry.endedAt = Date.now();
    });
    launched.context.on('requestfailed', (request) => {
      const entry = seen.get(request);
      if (entry) [entry.endedAt, entry.failed] = [Date.now(), request.failure()?.errorText ?? 'failed'];
    });
    return { page: await extensionPage(launched, path), downloads: profile.downloads, elementRequests };
  }
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-play-ff-'));
  cleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const launched = await launchFirefox(downloads, cleanup, { addonDir: addonWithReachablePlayer(cleanup), prefs: FIREFOX_PREFS });
  return { page: await openAddonPage(launched, path, cleanup), downloads, elementRequests };
}

/**
 * What the servers were asked, one line each, in ms since `t0`: `+1234 s1 bytes=0-65535 → 65536 B
 * in 812 ms, cut`; with the media element's requests to the stream route among them (`el …`).
 */
export function requestLog(servers: Mirror[], t0: number, elementRequests: ElementRequest[] = []): string[] {
  const lines = servers.flatMap((server, i) =>
    server.stats.requests.map((r) => ({
      at: r.startedAt - t0,
      line: `s${i + 1} ${r.range ?? 'whole'} → ${r.bytesSent} B in ${(r.endedAt ?? Date.now()) - r.startedAt} ms${r.aborted ? ', cut' : ''}`,
    })),
  );
  for (const r of elementRequests) lines.push({ at: r.at - t0, line: `el ${elementRequestText(r)}` });
  return lines.sort((a, b) => a.at - b.at).map((r) => `+${r.at} ${r.line}`);
}

export function elementRequestText(r: ElementRequest): string {
  const end = r.endedAt === undefined ? 'open' : `${r.failed ? `${r.failed} after` : 'ended after'} ${r.endedAt - r.at} ms`;
  return `${r.range} → ${r.status ?? 'no answer'}, ${end}`;
}
