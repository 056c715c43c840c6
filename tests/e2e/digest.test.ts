import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { extensionPage, request } from './support/chromium';
import { launchFirefox } from './support/firefox';
import { fileSha256, until, waitForFile } from './support/files';
import { browserWith, linkPage, MiB, mirror, onCleanup, profile } from './support/setup';

/**
 * The background hashes with WebAssembly (hash-wasm), which the extension's CSP must allow in
 * Chrome's service worker and Firefox's background page: a file whose server announces its
 * SHA-256 is verified and saved, and one whose announced SHA-256 is wrong is never saved.
 */
const SIZE = 40 * MiB;
const reprDigest = (hex: string) => ({ 'Repr-Digest': `sha-256=:${Buffer.from(hex, 'hex').toString('base64')}:` });

test('Chromium: the service worker verifies the announced SHA-256 and refuses a file that contradicts it', async () => {
  const sha = await contentSha256(61, SIZE);
  const good = await mirror({ size: SIZE, seed: 61, filename: 'verified.bin', extraHeaders: reprDigest(sha) });
  // The digest of other bytes of the same size.
  const liar = await mirror({ size: SIZE, seed: 62, filename: 'contradicted.bin', extraHeaders: reprDigest(sha) });
  const p = profile();
  const browser = await browserWith(p);
  const ui = await extensionPage(browser, 'popup.html');

  for (const url of [good.url, liar.url]) expect((await request(ui, { type: 'add-url', url })).ok).toBe(true);
  const saved = await waitForFile(p.downloads, 'verified.bin', SIZE, 120_000);
  expect(await fileSha256(saved)).toBe(sha);
  const failed = await until(
    'the contradicted job to fail',
    async () => {
      const jobs = (await request(ui, { type: 'list-jobs' })).value!.jobs;
      const job = jobs.find((j) => j.url === liar.url);
      return job?.state === 'failed' ? job : undefined;
    },
    120_000,
  );
  expect(failed.error).toMatch(new RegExp(`SHA-256 is [0-9a-f]{64}, but the server announced ${sha}`));
  expect(readdirSync(p.downloads)).toEqual(['verified.bin']);
});

test('Firefox: the background page verifies the announced SHA-256 and saves the exact file', async () => {
  const sha = await contentSha256(63, SIZE);
  const server = await mirror({ size: SIZE, seed: 63, filename: 'verified.bin', extraHeaders: reprDigest(sha) });
  const page = await linkPage([{ id: 'f', href: server.url, text: 'file' }]);
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup);

  const tab = await browser.newPage();
  await tab.goto(page);
  await tab.click('#f');

  const saved = await waitForFile(downloads, 'verified.bin', SIZE, 120_000);
  expect(await fileSha256(saved)).toBe(sha);
  // Stitch took it over (ranges), so its verified copy is the one saved.
  expect(server.stats.requests.some((r) => /bytes=[1-9]\d*-/.test(r.range ?? ''))).toBe(true);
});
