import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import type { Mirror, MirrorRequest } from '../support/mirror-server';
import { extensionPage, request, type Launched } from './support/chromium';
import { fileSha256, waitForFile } from './support/files';
import { alwaysTakeOver, browserWith, linkPage, MiB, mirror, profile } from './support/setup';

/**
 * Which of Stitch's requests carry a site's cookies, with two loopback sites: 127.0.0.1 and
 * localhost (other hosts, so other sites), each signing the browser in with a SameSite=Strict,
 * HttpOnly session cookie. An extension's fetch with credentials sends even Strict cookies, so
 * Stitch must decide per request what the browser itself would have sent.
 */

const session = (name: string) => `${name}=1; Path=/; SameSite=Strict; HttpOnly`;
const base64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
/** The same server under another host name of the loopback: another site for the browser. */
const onLocalhost = (url: string) => url.replace('//127.0.0.1:', '//localhost:');
const fileRequests = (m: Mirror): MirrorRequest[] => m.stats.requests.filter((r) => r.path === '/file.bin');

/** The server sets its session cookie in a tab, as a login would. */
async function signIn(browser: Launched, origin: string): Promise<void> {
  const tab = await browser.context.newPage();
  await tab.goto(`${origin}/set-cookie`);
  await tab.close();
}

/** Starts a download the way the popup's "Add URL" does: the user chose this URL. */
async function addUrl(browser: Launched, url: string): Promise<void> {
  const ui = await extensionPage(browser, 'offscreen/offscreen.html');
  const reply = await request(ui, { type: 'add-url', url });
  expect(reply.ok, reply.error).toBe(true);
}

test('a mirror on another site that the server advertises gets no cookies; the site the user chose does', async () => {
  const size = 8 * MiB;
  const seed = 91;
  const sha = await contentSha256(seed, size);
  const other = await mirror({ size, seed, setCookie: session('mirror-session') });
  const otherUrl = onLocalhost(other.url);
  const primary = await mirror({
    size,
    seed,
    filename: 'advertised.bin',
    rate: 4 * MiB,
    setCookie: session('session'),
    extraHeaders: { 'Repr-Digest': `sha-256=:${base64(sha)}:`, Link: `<${otherUrl}>; rel=duplicate` },
  });
  const p = profile();
  const browser = await browserWith(p);
  await signIn(browser, primary.origin);
  await signIn(browser, new URL(otherUrl).origin);

  await addUrl(browser, primary.url);
  const saved = await waitForFile(p.downloads, 'advertised.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(sha);

  const toMirror = fileRequests(other);
  expect(toMirror.length).toBeGreaterThan(0); // it was used
  for (const r of toMirror) expect(r, r.range).toMatchObject({ cookie: undefined, referer: undefined });
  for (const r of fileRequests(primary)) expect(r.cookie, r.range).toBe('session=1');
});

test('the target of a redirect to another site gets no cookies', async () => {
  const size = 4 * MiB;
  const seed = 92;
  const target = await mirror({ size, seed, filename: 'redirected.bin', setCookie: session('target-session') });
  const primary = await mirror({ size, seed, setCookie: session('session'), redirect: { location: onLocalhost(target.url) } });
  const p = profile();
  const browser = await browserWith(p);
  await signIn(browser, primary.origin);
  await signIn(browser, onLocalhost(target.origin));

  await addUrl(browser, primary.url);
  const saved = await waitForFile(p.downloads, 'redirected.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));

  expect(fileRequests(target).length).toBeGreaterThan(0);
  for (const r of fileRequests(target)) expect(r.cookie, r.range).toBeUndefined();
  // The site the user chose keeps its cookie: the browser reports the hop its fetch hides
  // (redirect-log.ts), so the engine follows it by hand, each URL with its own rules.
  expect(fileRequests(primary)[0]!.cookie).toBe('session=1');
});

/** A link to `file` on a page of `pageHost`, clicked; the browser's download is taken over and saved. */
async function clickThrough(pageHost: string, seed: number): Promise<Mirror> {
  const size = 24 * MiB;
  const file = await mirror({
    size,
    seed,
    filename: `${pageHost}.bin`,
    rate: 12 * MiB,
    faults: { resetAfterMs: 1000 },
    setCookie: session('session'),
  });
  const page = new URL('downloads/page.html', await linkPage([{ id: 'file', href: file.url, text: 'file' }]));
  page.hostname = pageHost; // the link page answers any path, on any name of the loopback
  const p = profile();
  const browser = await browserWith(p);
  await alwaysTakeOver(browser);
  await signIn(browser, file.origin);

  const tab = await browser.context.newPage();
  await tab.goto(page.href);
  await tab.click('#file');
  const saved = await waitForFile(p.downloads, `${pageHost}.bin`, size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  const log = fileRequests(file);
  expect(log[0]!.range).toBeUndefined(); // the browser's own request
  expect(log.filter((r) => r.range && r.range !== 'bytes=0-0').length).toBeGreaterThanOrEqual(2); // Stitch's, resumed after resets
  return file;
}

test('a take-over of a link from another site carries no cookie, as the browser sent none', async () => {
  const file = await clickThrough('localhost', 93);
  for (const r of fileRequests(file)) expect(r.cookie, r.range ?? 'the browser').toBeUndefined();
});

test('a take-over of a link from the same site carries the cookie, as the browser did', async () => {
  const file = await clickThrough('127.0.0.1', 94);
  for (const r of fileRequests(file)) expect(r.cookie, r.range ?? 'the browser').toBe('session=1');
});
