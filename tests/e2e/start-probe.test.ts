/**
 * Issue 27's start probe, in both browsers: with the default settings Stitch measures a plain
 * download with one request of its own, takes it over when that makes it faster (a server that caps
 * each connection), and leaves it with the browser when the line is the limit. Its verdict compares
 * rates, so this file runs alone (vitest.e2e.config.ts).
 */
import { readdirSync } from 'node:fs';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { fileSha256, until, waitForFile } from './support/files';
import { MiB, mirror } from './support/setup';
import { chromiumWithDefaults, clickWatchedInChromium, clickWatchedInFirefox, measuringRequests } from './support/watched';

test('Chromium: a server that caps each connection: Stitch measures, takes the download over early, exact, and takes the next from that host at once', async () => {
  const size = 24 * MiB;
  const seed = 63;
  const server = await mirror({ size, seed, connectionRate: 1 * MiB, filename: (query) => `capped-${query.get('n')}.bin` });
  const { tab, downloads, notices, jobs } = await chromiumWithDefaults([`${server.url}?n=1`, `${server.url}?n=2`]);

  await tab.click('#f0');
  await until('the first download taken over', async () => (await jobs()).length === 1, 20_000);
  expect(measuringRequests(server, size)).toHaveLength(1);
  const expected = await contentSha256(seed, size);
  expect(await fileSha256(await waitForFile(downloads, 'capped-1.bin', size, 60_000))).toBe(expected);

  // The host is remembered as capping each connection: no measuring this time.
  await tab.click('#f1');
  await until('the second download taken over', async () => (await jobs()).length === 2, 20_000);
  expect(measuringRequests(server, size)).toHaveLength(1);
  expect(await fileSha256(await waitForFile(downloads, 'capped-2.bin', size, 60_000))).toBe(expected);
  expect(await notices()).toEqual([]);
});

test('Chromium: a line that is the limit (the server shares one rate among all connections): the download stays with the browser, watched, and ends exact', async () => {
  const size = 40 * MiB;
  const seed = 64;
  const file = await mirror({ size, seed, rate: 8 * MiB, filename: 'line.bin' });
  const { downloads, notices, jobs } = await clickWatchedInChromium(file);

  const saved = await waitForFile(downloads, 'line.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Measured once, and left with the browser: one request of its own for the whole file, and Stitch's first byte.
  expect(measuringRequests(file, size)).toHaveLength(1);
  expect(file.stats.requests.filter((r) => r.range === undefined)).toHaveLength(1);
  expect(await jobs()).toEqual([]);
  expect(await notices()).toEqual([]);
});

test('Firefox: a server that caps each connection: Stitch measures, takes the download over early, and saves it exact', async () => {
  const size = 24 * MiB;
  const seed = 66;
  const file = await mirror({ size, seed, connectionRate: 1 * MiB, filename: 'capped-ff.bin' });
  const { downloads, stitchTook } = await clickWatchedInFirefox(file);

  await until('the download taken over', async () => (await stitchTook()).jobs.includes(file.url), 20_000);
  expect(measuringRequests(file, size)).toHaveLength(1);
  const saved = await waitForFile(downloads, 'capped-ff.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Firefox's own copy was cancelled and erased: the folder holds Stitch's file alone (beside the player's clip).
  expect(readdirSync(downloads).filter((name) => name.startsWith('capped-ff'))).toEqual(['capped-ff.bin']);
  // Stitch's requests came over several connections, each capped at 1 MiB/s: far faster than Firefox's one.
  expect(file.stats.peakConnections).toBeGreaterThanOrEqual(3);
  expect((await stitchTook()).notices).toEqual([]);
});
