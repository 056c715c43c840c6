/**
 * Issue 47, item 2: a page that merely loads a playlist must not make Stitch request what the
 * page chooses. The stream finder reads only what the tab's player loaded itself, without the
 * user's cookies, and nothing on the user's network after a public page; Download (the user
 * asking) goes through the one door, which refuses a public playlist's local parts.
 *
 * Every server is on the loopback. The "public" site is addressed by a name the browser resolves
 * to 127.0.0.1 (video.public.test); the "router" is addressed as 127.0.0.1 itself, a local
 * address, and records every request it receives: it must receive none from Stitch.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { RequestOf, ReplyOf } from '../../src/messages';
import { extensionPage, launchWithExtension, request } from './support/chromium';
import { addonWithTestPage, askBackground, launchFirefox, openAddonPage, showPopupIn } from './support/firefox';
import { onCleanup, profile } from './support/setup';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
}

/** A server answering `routes` (path → body), recording every request. */
async function server(routes: Record<string, { type: string; body: string; cookie?: string }>): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const http: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const route = routes[(req.url ?? '').split('?')[0]!];
    if (!route) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': route.type, ...(route.cookie && { 'set-cookie': route.cookie }) }).end(route.body);
  });
  await new Promise<void>((listening) => http.listen(0, '127.0.0.1', listening));
  onCleanup(() => {
    http.closeAllConnections();
    return new Promise((closed) => http.close(closed));
  });
  return { port: (http.address() as AddressInfo).port, seen };
}

const page = (title: string, script: string) => `<!doctype html><title>${title}</title><script>${script}</script>`;
const marked = `.finally(() => document.body.append(Object.assign(document.createElement('p'), { id: 'loaded' })))`;

interface Driver {
  /** Opens `url` in a tab and waits until its script marked it loaded. */
  visit(url: string): Promise<void>;
  /** The popup's stream rows: each playlist's URL, and why it is refused if it is. */
  rows(): Promise<{ url: string; refused: string }[]>;
  send<T extends 'download-stream'>(message: RequestOf<T>): Promise<{ ok: boolean; value?: ReplyOf<T>; error?: string }>;
}

async function scenario(browser: Driver): Promise<void> {
  const router = await server({ '/cgi-bin/reboot.cgi': { type: 'text/plain', body: 'rebooting' } });
  const routerUrl = `http://127.0.0.1:${router.port}`;
  const master = [
    '#EXTM3U',
    '#EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080',
    `${routerUrl}/cgi-bin/reboot.cgi`,
    '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360',
    `${routerUrl}/cgi-bin/reboot.cgi?low`,
    '',
  ].join('\n');
  const site = await server({
    '/watch.html': {
      type: 'text/html',
      body: page('Episode 1', `fetch('master.m3u8').then((r) => r.text())${marked}`),
      cookie: 'session=s3cret; Path=/',
    },
    '/master.m3u8': { type: 'application/vnd.apple.mpegurl', body: master },
    '/local.html': {
      type: 'text/html',
      body: page('Camera', `fetch('${routerUrl}/cam.m3u8', { mode: 'no-cors' }).catch(() => {})${marked}`),
    },
  });
  const siteUrl = `http://video.public.test:${site.port}`;

  // A public page's master playlist names addresses on the user's network: listed as refused, never followed.
  await browser.visit(`${siteUrl}/watch.html`);
  const unsafe = 'It names addresses Stitch does not request: on your own network, or plain http inside an https stream.';
  await expect.poll(() => browser.rows(), { timeout: 15_000 }).toContainEqual({ url: `${siteUrl}/master.m3u8`, refused: unsafe });
  const masterReads = site.seen.filter((s) => s.path === '/master.m3u8');
  // The page's own request, and Stitch's one reading of it, which carries none of the user's cookies.
  expect(masterReads.map((s) => s.headers.cookie)).toEqual(['session=s3cret', undefined]);
  await new Promise((settle) => setTimeout(settle, 2000));
  expect(router.seen).toEqual([]);

  // Download (the user asking) is refused at the door, in words, and still nothing reaches the router.
  const reply = await browser.send({ type: 'download-stream', url: `${siteUrl}/master.m3u8` });
  expect(reply.ok).toBe(false);
  expect(reply.error).toBe(unsafe);
  expect(router.seen).toEqual([]);

  // A public page whose player loads a playlist from the user's network: the page's own request
  // reaches it (that is the browser's business), Stitch never asks again, and lists nothing.
  await browser.visit(`${siteUrl}/local.html`);
  await new Promise((settle) => setTimeout(settle, 2000));
  expect(router.seen.map((s) => s.path)).toEqual(['/cam.m3u8']);
  expect((await browser.rows()).map((row) => row.url)).not.toContain(`${routerUrl}/cam.m3u8`);
}

test('Chromium: a public page’s playlist makes Stitch request nothing on the user’s network, nor with the user’s cookies', async () => {
  const p = profile();
  const launched = await launchWithExtension(p, undefined, ['--host-resolver-rules=MAP *.test 127.0.0.1']);
  onCleanup(() => launched.close());
  const popup = await extensionPage(launched, 'popup.html');
  await popup.getByTestId('empty').waitFor();
  const tab = await launched.context.newPage();
  await scenario({
    visit: async (url) => {
      await tab.goto(url);
      await tab.locator('#loaded').waitFor({ state: 'attached' });
    },
    rows: () =>
      popup.getByTestId('stream-row').evaluateAll((rows) =>
        rows.map((row) => ({
          url: row.getAttribute('data-url') ?? '',
          refused: row.querySelector('[data-testid="stream-refused"]')?.textContent ?? '',
        })),
      ),
    send: (message) => request(popup, message),
  });
});

test('Firefox: a public page’s playlist makes Stitch request nothing on the user’s network, nor with the user’s cookies', async () => {
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, {
    addonDir: addonWithTestPage(onCleanup),
    prefs: { 'network.dns.localDomains': 'video.public.test' },
  });
  const tab = await browser.newPage();
  const ui = await openAddonPage(browser, 'test-page.html', onCleanup);
  await showPopupIn(ui);
  const background = askBackground(ui);
  await scenario({
    visit: async (url) => {
      await tab.goto(url);
      await tab.waitForSelector('#loaded');
    },
    rows: () =>
      ui.evaluate(() =>
        [
          ...(document.querySelector<HTMLIFrameElement>('#popup')?.contentDocument?.querySelectorAll('[data-testid="stream-row"]') ?? []),
        ].map((row) => ({
          url: row.getAttribute('data-url') ?? '',
          refused: row.querySelector('[data-testid="stream-refused"]')?.textContent ?? '',
        })),
      ),
    send: (message) => background(message),
  });
});
