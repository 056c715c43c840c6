import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import { CHUNK_BYTES } from '../../src/storage/opfs-chunks';
import { contentSha256 } from '../support/content';
import { extensionPage, request } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { browserWith, MiB, mirror, onCleanup, profile } from './support/setup';
import { smallDisk } from './support/small-disk';

/**
 * Issue 48: Chromium's streamed save gives the store's space back behind the browser's download
 * (whole chunk files of the origin private file system), so the store never holds the whole file.
 */
const SIZE = 200 * MiB;
/** The engine's writes run this far ahead of the bytes the save hands over, at most (its block window), with room to spare. */
const AHEAD = 64 * MiB;

/** Bytes on disk (allocated blocks) of every file under `dir`. */
function diskBytes(dir: string): number {
  let total = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0; // not made yet, or being changed under us
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += diskBytes(path);
    else {
      try {
        total += statSync(path).blocks * 512;
      } catch {
        // deleted meanwhile
      }
    }
  }
  return total;
}

/** Samples `measure` every 100 ms until stopped; the highest value seen. */
function peakOf(measure: () => number): { peak: () => number; stop: () => void } {
  let peak = measure();
  const timer = setInterval(() => (peak = Math.max(peak, measure())), 100);
  return { peak: () => peak, stop: () => clearInterval(timer) };
}

async function saveWhileDownloading(page: Page): Promise<void> {
  const { settings } = (await request(page, { type: 'get-settings' })).value!;
  expect((await request(page, { type: 'set-settings', settings: { ...settings, saveWhileDownloading: true } })).ok).toBe(true);
}

test('a 200 MB streamed save: the store holds a few chunks at most, never the whole file, and the file is exact', async () => {
  const name = 'release-behind.bin';
  const server = await mirror({ size: SIZE, seed: 481, filename: name, rate: 25 * MiB });
  const p = profile();
  const browser = await browserWith(p);
  const ui = await extensionPage(browser, 'popup.html');
  await saveWhileDownloading(ui);

  const opfs = join(p.dir, 'Default', 'File System');
  const store = peakOf(() => diskBytes(opfs));
  const both = peakOf(() => diskBytes(opfs) + diskBytes(p.downloads));
  onCleanup(() => {
    store.stop();
    both.stop();
  });
  expect((await request(ui, { type: 'add-url', url: server.url })).ok).toBe(true);

  const saved = await waitForFile(p.downloads, name, SIZE, 120_000);
  store.stop();
  both.stop();
  expect(await fileSha256(saved)).toBe(await contentSha256(481, SIZE));
  await until('the job to be saved', async () => (await request(ui, { type: 'list-jobs' })).value!.jobs[0]?.state === 'saved', 10_000);
  const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  console.log(`release-behind: ${mib(SIZE)} file; store peak ${mib(store.peak())}; store + download folder peak ${mib(both.peak())}`);
  expect(store.peak()).toBeLessThan(2 * CHUNK_BYTES + AHEAD);
  expect(both.peak()).toBeLessThan(SIZE + 2 * CHUNK_BYTES + AHEAD);
  // Saved: the store gives back the rest.
  await until('the store to be empty', () => diskBytes(opfs) < 1 * MiB, 10_000);
});

test('on a disk that holds the file once but not twice, Stitch saves while downloading by itself and lands it exact', async () => {
  const size = 160 * MiB;
  const name = 'fits-once.bin';
  // Twice the file (320 MiB) does not fit; once, with a chunk or so of store and the profile, does.
  const disk = smallDisk(320 * MiB, onCleanup);
  const server = await mirror({ size, seed: 482, filename: name, rate: 25 * MiB });
  const p = disk.onDisk(() => profile());
  const browser = await disk.onDisk(() => browserWith(p));
  // "Save while downloading" stays off (the default): the disk's room chooses it.
  const ui = await extensionPage(browser, 'popup.html');
  const lowest = peakOf(() => -disk.free());
  onCleanup(lowest.stop);
  expect((await request(ui, { type: 'add-url', url: server.url })).ok).toBe(true);

  const saved = await waitForFile(p.downloads, name, size, 120_000);
  lowest.stop();
  expect(await fileSha256(saved)).toBe(await contentSha256(482, size));
  console.log(`fits once: ${(size / MiB).toFixed(0)} MiB file on a 320 MiB disk; lowest free ${(-lowest.peak() / MiB).toFixed(1)} MiB`);
  await until('the job to be saved', async () => (await request(ui, { type: 'list-jobs' })).value!.jobs[0]?.state === 'saved', 10_000);
});

test('the worker killed after chunks were released: the job fetches them again and the save still ends exact', async () => {
  const name = 'killed-after-release.bin';
  const server = await mirror({ size: SIZE, seed: 483, filename: name, rate: 25 * MiB });
  const p = profile();
  const browser = await browserWith(p);
  const ui = await extensionPage(browser, 'popup.html');
  await saveWhileDownloading(ui);
  expect((await request(ui, { type: 'add-url', url: server.url })).ok).toBe(true);
  // Past two chunks: the first one at least was handed to the browser and released.
  await until('140 MiB to arrive', () => server.stats.bytesSent > 140 * MiB, 60_000);

  const cdp = await browser.context.newCDPSession(ui);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await until('the worker to answer again', async () => (await request(ui, { type: 'list-jobs' }).catch(() => undefined))?.ok, 20_000);

  const saved = await waitForFile(p.downloads, name, SIZE, 120_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(483, SIZE));
  expect(readdirSync(p.downloads)).toEqual([name]);
  // The released bytes were fetched again: more than the file was sent.
  expect(server.stats.bytesSent).toBeGreaterThan(SIZE);
});
