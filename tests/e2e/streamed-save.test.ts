import { readdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { extensionPage, request } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { browserWith, MiB, mirror, profile } from './support/setup';

/**
 * Chromium saves while Stitch downloads: the worker's save route streams the stored bytes into a
 * browser download, holding the last ones back until the job is verified.
 */
const SIZE = 24 * MiB;

/** The browser's downloads as an extension page sees them. */
function browserDownloads(page: Page): Promise<{ id: number; url: string; state: string; filename: string }[]> {
  return page.evaluate(async () => {
    type Item = { id: number; url: string; state: string; filename: string };
    const api = (globalThis as unknown as { chrome: { downloads: { search(query: object): Promise<Item[]> } } }).chrome;
    return (await api.downloads.search({})).map((d) => ({ id: d.id, url: d.url, state: d.state, filename: d.filename }));
  });
}

/** Turns the setting on (it is off by default). */
async function saveWhileDownloading(page: Page): Promise<void> {
  const { settings } = (await request(page, { type: 'get-settings' })).value!;
  expect((await request(page, { type: 'set-settings', settings: { ...settings, saveWhileDownloading: true } })).ok).toBe(true);
}

const isSave = (url: string) => /^chrome-extension:\/\/[^/]+\/save\//.test(url);

test('the save streams while the job downloads and ends as the exact file under its own name', async () => {
  const name = 'Bericht über März – 2026.bin';
  const server = await mirror({ size: SIZE, seed: 71, filename: name, rate: 6 * MiB });
  const p = profile();
  const browser = await browserWith(p);
  const ui = await extensionPage(browser, 'popup.html');
  await saveWhileDownloading(ui);
  expect((await request(ui, { type: 'add-url', url: server.url })).ok).toBe(true);

  // Half-way through, the browser is already writing the file.
  await until('half of the file to be sent', () => server.stats.bytesSent > SIZE / 2, 30_000);
  const during = await browserDownloads(ui);
  expect(during).toMatchObject([{ state: 'in_progress' }]);
  expect(isSave(during[0]!.url)).toBe(true);
  expect(server.stats.bytesSent).toBeLessThan(SIZE);

  const saved = await waitForFile(p.downloads, name, SIZE, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(71, SIZE));
  expect(readdirSync(p.downloads)).toEqual([name]);
  const jobs = await until(
    'the job to be saved',
    async () => {
      const list = (await request(ui, { type: 'list-jobs' })).value!.jobs;
      return list[0]?.state === 'saved' ? list : undefined;
    },
    10_000,
  );
  expect(jobs).toMatchObject([{ state: 'saved', filename: name }]);
});

test('a file that contradicts its announced digest is streamed but never kept: no file, a plain message', async () => {
  const sha = await contentSha256(72, SIZE);
  // Another file's digest: the job downloads everything, then fails its check.
  const liar = await mirror({
    size: SIZE,
    seed: 73,
    filename: 'contradicted.bin',
    rate: 8 * MiB,
    extraHeaders: { 'Repr-Digest': `sha-256=:${Buffer.from(sha, 'hex').toString('base64')}:` },
  });
  const p = profile();
  const browser = await browserWith(p);
  const ui = await extensionPage(browser, 'popup.html');
  await saveWhileDownloading(ui);
  expect((await request(ui, { type: 'add-url', url: liar.url })).ok).toBe(true);

  await until('a streamed save to start', async () => (await browserDownloads(ui)).some((d) => isSave(d.url)), 30_000);
  const failed = await until(
    'the job to fail',
    async () => (await request(ui, { type: 'list-jobs' })).value!.jobs.find((j) => j.state === 'failed'),
    60_000,
  );
  expect(failed.error).toMatch(/SHA-256 is [0-9a-f]{64}, but the server announced/);
  // The browser's partial file is deleted and its download erased.
  await until('the partial file to go', () => readdirSync(p.downloads).length === 0, 10_000);
  expect(await browserDownloads(ui)).toEqual([]);
});

test('the worker killed mid-save (CDP ServiceWorker.stopAllWorkers) still ends with the one exact file', async () => {
  const server = await mirror({ size: SIZE, seed: 74, filename: 'killed-save.bin', rate: 4 * MiB });
  const p = profile();
  const browser = await browserWith(p);
  const ui = await extensionPage(browser, 'popup.html');
  await saveWhileDownloading(ui);
  expect((await request(ui, { type: 'add-url', url: server.url })).ok).toBe(true);
  const first = await until('a streamed save to be under way', async () => (await browserDownloads(ui)).find((d) => isSave(d.url)), 30_000);
  await until('8 MiB to arrive', () => server.stats.bytesSent > 8 * MiB, 30_000);

  const cdp = await browser.context.newCDPSession(ui);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  // Any message wakes the worker, which resumes the job and reopens the save.
  await until('the worker to answer again', async () => (await request(ui, { type: 'list-jobs' }).catch(() => undefined))?.ok, 20_000);

  const saved = await waitForFile(p.downloads, 'killed-save.bin', SIZE, 90_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(74, SIZE));
  expect(readdirSync(p.downloads)).toEqual(['killed-save.bin']);
  // The broken save was cancelled and erased: one browser download, complete.
  const downloads = await until(
    'the broken save to be erased',
    async () => {
      const list = await browserDownloads(ui);
      return list.length === 1 ? list : undefined;
    },
    10_000,
  );
  expect(downloads).toMatchObject([{ state: 'complete' }]);
  expect(downloads[0]!.id).not.toBe(first.id); // a new save, from the store
});
