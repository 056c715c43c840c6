/**
 * The aria2 hand-off in Chromium against a real `aria2c --enable-rpc` on loopback, as a person sets it up:
 * the options page tests the endpoint (a wrong token, then the right one) and saves a rule; a link clicked
 * is taken over and handed to aria2, and lands exact in aria2's folder, not the browser's; the popup lists
 * it. With aria2 stopped mid-download the popup says so, and Run in Stitch finishes the file in Stitch.
 * An endpoint that redirects is not followed: the token never reaches where it points.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { startAria2 } from '../support/aria2-daemon';
import { contentSha256 } from '../support/content';
import { startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';
import { extensionPage, launchWithExtension, makeProfile, request, type Launched, type Profile } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { startHostile } from '../support/hostile-server';
import { startLinkPage } from './support/link-page';

const MiB = 1024 * 1024;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const undo of cleanup.splice(0).reverse()) await undo();
});

async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  cleanup.push(() => m.close());
  return m;
}

/** A browser with Stitch, and a page linking to `href` (served before the browser starts, closed after it). */
async function setup(href: string): Promise<{ profile: Profile; browser: Launched; clickLink: () => Promise<void> }> {
  const page = await startLinkPage([{ id: 'file', href, text: 'the file' }]);
  cleanup.push(() => page.close());
  const profile = makeProfile();
  cleanup.push(() => profile.remove());
  const browser = await launchWithExtension(profile);
  cleanup.push(() => browser.close());
  const clickLink = async () => {
    const tab = await browser.context.newPage();
    await tab.goto(page.url);
    await tab.click('#file');
  };
  return { profile, browser, clickLink };
}

test('the options page tests aria2 and saves a rule; a link taken over goes to aria2 with the mirror and digest its server announces, and lands exact', async () => {
  const aria2 = await startAria2();
  cleanup.push(() => aria2.close());
  // Over the 20 MB from which Stitch takes downloads over, and the 10 MB from which its rule sends them to aria2.
  const size = 24 * MiB;
  const hex = await contentSha256(31, size);
  // The server names a mirror (the same loopback by another name: aria2 counts connections per host name) and the digest.
  const second = await mirror({ size, seed: 31, rate: 4 * MiB });
  const file = await mirror({
    size,
    seed: 31,
    filename: 'for aria2.bin',
    rate: 4 * MiB,
    extraHeaders: {
      'Repr-Digest': `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:`,
      Link: `<${second.url.replace('//127.0.0.1:', '//localhost:')}>; rel=duplicate`,
    },
  });
  const { profile, browser, clickLink } = await setup(file.url);

  const options = await extensionPage(browser, 'options.html');
  await options.getByTestId('setting-aria2-url').fill(aria2.url);
  await options.getByTestId('setting-aria2-secret').fill('not the secret');
  await options.getByTestId('aria2-test').click();
  await expect
    .poll(() => options.getByTestId('aria2-test-result').textContent(), { timeout: 10_000 })
    .toBe('aria2 refused the secret token: enter the one it was started with (--rpc-secret).');
  await options.getByTestId('setting-aria2-secret').fill(aria2.secret);
  await options.getByTestId('aria2-test').click();
  await expect
    .poll(() => options.getByTestId('aria2-test-result').textContent(), { timeout: 10_000 })
    .toMatch(/^aria2 1\.\d+\.\d+ answered: downloads can go there\.$/);
  await options.getByTestId('setting-aria2-min-mb').fill('10');
  await options.getByTestId('settings-save').click();
  await expect.poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 }).toMatch(/^Saved/);

  const popup = await extensionPage(browser, 'popup.html');
  await clickLink();
  // aria2 gives the file its full size at once: it is complete when aria2 says so.
  await expect.poll(() => popup.getByTestId('aria2-state').textContent(), { timeout: 30_000 }).toBe('Saved by aria2');
  expect(await fileSha256(join(aria2.dir, 'for aria2.bin'))).toBe(hex);
  // Only aria2 fetched from the mirror the server announced.
  expect(second.stats.bytesSent).toBeGreaterThan(size / 4);
  expect(await popup.getByTestId('aria2-row').textContent()).toContain('for aria2.bin');
  // Stitch kept nothing of it, and the browser's own copy was cancelled.
  expect((await request(popup, { type: 'list-jobs' })).value?.jobs).toEqual([]);
  expect(existsSync(join(profile.downloads, 'for aria2.bin'))).toBe(false);
});

test('aria2 stopped mid-download: the popup says so, and Run in Stitch saves the exact file with Stitch', async () => {
  const aria2 = await startAria2();
  cleanup.push(() => aria2.close());
  const size = 24 * MiB;
  const file = await mirror({ size, seed: 32, filename: 'interrupted.bin', rate: 3 * MiB });
  const { profile, browser, clickLink } = await setup(file.url);
  const popup = await extensionPage(browser, 'popup.html');
  const settings = (await request(popup, { type: 'get-settings' })).value!.settings;
  await request(popup, {
    type: 'set-settings',
    settings: { ...settings, aria2Url: aria2.url, aria2Secret: aria2.secret, aria2MinBytes: MiB },
  });

  await clickLink();
  await expect.poll(() => popup.getByTestId('aria2-state').textContent(), { timeout: 15_000 }).toBe('Downloading in aria2');
  await until('aria2 to have fetched a few MiB', () => file.stats.bytesSent > 4 * MiB, 15_000);
  await aria2.kill();
  await expect
    .poll(() => popup.getByTestId('aria2-trouble').textContent(), { timeout: 10_000 })
    .toBe('aria2 does not answer at this address. Is it running, with --enable-rpc and this port?');

  await popup.getByRole('button', { name: 'Run in Stitch interrupted.bin' }).click();
  const saved = await waitForFile(profile.downloads, 'interrupted.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(32, size));
  await expect.poll(() => popup.getByTestId('aria2-row').count(), { timeout: 10_000 }).toBe(0);
});

test('a download with two mirrors and a digest, sent from the popup, lands exact in aria2 from both mirrors', async () => {
  const aria2 = await startAria2();
  cleanup.push(() => aria2.close());
  const size = 24 * MiB;
  const hex = await contentSha256(33, size);
  // aria2 counts connections per host name: the second mirror is the same loopback by another name.
  const second = await mirror({ size, seed: 33, rate: 2 * MiB });
  const secondUrl = second.url.replace('//127.0.0.1:', '//localhost:');
  const primary = await mirror({
    size,
    seed: 33,
    filename: 'two mirrors.bin',
    rate: 2 * MiB,
    extraHeaders: { 'Repr-Digest': `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:`, Link: `<${secondUrl}>; rel=duplicate` },
  });
  const { browser } = await setup(primary.url);
  const popup = await extensionPage(browser, 'popup.html');
  const settings = (await request(popup, { type: 'get-settings' })).value!.settings;
  await request(popup, { type: 'set-settings', settings: { ...settings, aria2Url: aria2.url, aria2Secret: aria2.secret } });
  await request(popup, { type: 'add-url', url: primary.url });
  // Stitch has learned both sources and the digest before it hands the download over.
  await until('both sources to send bytes to Stitch', () => primary.stats.bytesSent > MiB && second.stats.bytesSent > MiB, 20_000);

  const row = popup.getByTestId('job-row');
  await row.getByTestId('job-details-toggle').click();
  const handedAt = Date.now();
  await row.getByRole('button', { name: 'Send to aria2 two mirrors.bin' }).click();
  await expect.poll(() => popup.getByTestId('aria2-state').textContent(), { timeout: 30_000 }).toBe('Saved by aria2');
  expect(await fileSha256(join(aria2.dir, 'two mirrors.bin'))).toBe(hex);
  expect(await popup.getByTestId('job-row').count()).toBe(0);
  const sentToAria2 = (m: Mirror) => m.stats.requests.filter((r) => r.startedAt >= handedAt).reduce((sum, r) => sum + r.bytesSent, 0);
  expect(sentToAria2(primary)).toBeGreaterThan(size / 4);
  expect(sentToAria2(second)).toBeGreaterThan(size / 4);
});

test('an aria2 address that answers with a redirect is not followed: the token never reaches the other server', async () => {
  const elsewhere = await startHostile((_req, res) => res.end('{"jsonrpc":"2.0","id":"1","result":{"version":"1.37.0"}}'));
  cleanup.push(() => elsewhere.close());
  const endpoint = await startHostile((_req, res) => {
    res.writeHead(307, { location: `${elsewhere.origin}/jsonrpc` });
    res.end();
  });
  cleanup.push(() => endpoint.close());
  const { browser } = await setup('http://127.0.0.1:9/unused');
  const options = await extensionPage(browser, 'options.html');
  await options.getByTestId('setting-aria2-url').fill(`${endpoint.origin}/jsonrpc`);
  await options.getByTestId('setting-aria2-secret').fill('the-secret');
  await options.getByTestId('aria2-test').click();
  await expect
    .poll(() => options.getByTestId('aria2-test-result').textContent(), { timeout: 10_000 })
    .toBe('Something answered at this address, but not aria2. Check the port and the path (/jsonrpc).');
  expect(endpoint.requests).toEqual(['/jsonrpc']);
  expect(elsewhere.connections).toBe(0);
});
