import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import type { Settings } from '../../src/settings/schema';
import { lowestFree, rigOn, type BrowserName, type Rig } from './support/disk-rig';
import { fileSha256, until, waitForFile } from './support/files';
import { MiB, mirror } from './support/setup';

/**
 * Issue 48, as a person meets it: the browser's profile and its download folder on one small disk (a tmpfs of
 * the test's own), "Always take over" on so that Stitch takes every download it can, in Chromium and Firefox
 * ESR. Each test asserts the words shown (the popup's notices and rows, list-jobs), the file's SHA-256, and
 * prints the lowest free space seen (statfs every 100 ms).
 *
 * Firefox tells Stitch only a share of the disk's size, never what is free: there a full disk is said without
 * sizes, and a save that meets it says so and keeps the file for Retry.
 */

const TAKE_ALL = { alwaysTakeOver: true } as const;
const mb = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
const LEFT_NO_ROOM =
  /^Left to the browser, which writes the file once: Stitch can use (\d[\d.,]* [KMG]B) of the disk now, and would need (\d[\d.,]* [KMG]B) to download and then save it\.$/;
const DISK_FULL_NOTICE = (name: string) =>
  `The browser stopped “${name}”: its disk is full. Its partial file is kept: free some space, then resume it in the browser's downloads, or download it again where the browser cannot resume it.`;
const STORAGE_FULL_ROOM =
  /^Not enough room: Stitch needs \d[\d.,]* [KMG]B more and can use \d[\d.,]* [KMG]B of the disk now\. Every byte downloaded so far is kept: free some space, then press Resume\.$/;

/** What the browser calls a write that failed on a full disk (measured, issue 48). */
const FULL_REASON: Record<BrowserName, string> = { chromium: 'FILE_NO_SPACE', firefox: 'FILE_FAILED' };
/** The browser's partial file beside the download's name. */
const PARTIAL: Record<BrowserName, RegExp> = { chromium: /\.crdownload$/, firefox: /\.part$/ };

/** Bytes of each file in the download folder (allocated size for partial files). */
function folder(dir: string): Record<string, number> {
  return Object.fromEntries(readdirSync(dir).map((name) => [name, statSync(join(dir, name)).size]));
}

/** Bytes of "298 MB" / "25.7 MB" as the words write sizes (1024-based). */
function sizeOf(words: string): number {
  const [value, unit] = words.split(' ');
  return Number(value!.replace(/,/g, '')) * 1024 ** ['B', 'KB', 'MB', 'GB'].indexOf(unit!);
}

/** A finished file of `size` bytes in `dir` (any name: a stale partial file may sit beside it). */
function exactFileIn(dir: string, size: number, timeoutMs: number): Promise<string> {
  return until(
    `a file of ${size} bytes in ${dir}`,
    () => {
      const found = Object.entries(folder(dir)).find(([file, bytes]) => bytes === size && !/\.(part|crdownload)$/.test(file));
      return found && join(dir, found[0]);
    },
    timeoutMs,
  );
}

async function noticesShown(rig: Rig): Promise<string[]> {
  const [listed, shown] = [(await rig.list()).notices.map((n) => n.message), (await rig.popup()).notices];
  // The popup shows what list-jobs tells (the page-wide notices), in the same words.
  for (const message of listed) expect(shown.some((s) => s.includes(message))).toBe(true);
  return listed;
}

describe.each<BrowserName>(['chromium', 'firefox'])('%s, profile and download folder on one small disk', (browser) => {
  test('(a) a file that fits once but not twice lands exact: left with the browser, and the notice says why in sizes', async () => {
    const size = 120 * MiB;
    const seed = 4801;
    const name = 'fits-once.bin';
    const server = await mirror({ size, seed, filename: name, connectionRate: 25 * MiB });
    // Firefox's quota is half the disk's size (persisted): on 256 MiB, 128 MiB, short of the file and its margin.
    const rig = await rigOn(browser, 256 * MiB, server.url, TAKE_ALL);
    rig.disk.leave(150 * MiB);
    const before = rig.disk.free();
    const low = lowestFree(rig.disk);
    await rig.click();

    const saved = await waitForFile(rig.downloads, name, size, 90_000);
    low.stop();
    expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
    const { jobs } = await rig.list();
    expect(jobs).toEqual([]); // Stitch took nothing: the browser wrote the file once
    const notices = await noticesShown(rig);
    const left = notices.map((n) => LEFT_NO_ROOM.exec(n)).find(Boolean);
    expect(left, `notices: ${JSON.stringify(notices)}`).toBeTruthy();
    console.log(
      `[disk-room] (a) ${browser}: ${mb(size)} file, ${mb(before)} free at the click; lowest free ${mb(low.lowest())}; ` +
        `notice: "${left![0]}"`,
    );
    expect(low.lowest()).toBeGreaterThan(0);
    // The words make sense to a person: what Stitch would need is more than what it can use.
    const [can, would] = [left![1]!, left![2]!].map(sizeOf);
    expect.soft(would, `"${left![0]}": would need more than it can use`).toBeGreaterThan(can!);
  });

  test('(b) a file that fits nowhere: the browser stops on a full disk, the notice says so, the partial file stays; freed and resumed, exact', async () => {
    const size = 120 * MiB;
    const seed = 4802;
    const name = 'fits-nowhere.bin';
    const server = await mirror({ size, seed, filename: name, connectionRate: 25 * MiB });
    const rig = await rigOn(browser, 256 * MiB, server.url, TAKE_ALL);
    rig.disk.leave(100 * MiB);
    const before = rig.disk.free();
    await rig.click();

    const stopped = await until(
      'the browser to stop the download',
      async () => (await rig.items()).find((i) => i.state === 'interrupted' || i.state === 'complete'),
      60_000,
    );
    const files = folder(rig.downloads);
    console.log(
      `[disk-room] (b) ${browser}: ${mb(size)} file, ${mb(before)} free at the click; the browser's download: ` +
        `${JSON.stringify({ state: stopped.state, error: stopped.error, bytesReceived: stopped.bytesReceived, canResume: stopped.canResume, exists: stopped.exists })}; ` +
        `folder: ${JSON.stringify(files)}; free ${mb(rig.disk.free())}`,
    );
    expect(stopped.state).toBe('interrupted');
    expect(stopped.error).toBe(FULL_REASON[browser]);
    // The notice says the disk is full and the partial file is kept; Stitch took nothing.
    await until('the disk-full notice', async () => (await rig.list()).notices.some((n) => n.message === DISK_FULL_NOTICE(name)), 10_000);
    const notices = await noticesShown(rig);
    console.log(`[disk-room] (b) ${browser}: notices ${JSON.stringify(notices)}; popup ${JSON.stringify(await rig.popup())}`);
    expect((await rig.list()).jobs).toEqual([]);
    // The partial file is kept, with the bytes the browser wrote.
    const partial = Object.entries(folder(rig.downloads)).find(([file]) => PARTIAL[browser].test(file));
    expect(partial, `folder: ${JSON.stringify(folder(rig.downloads))}`).toBeTruthy();
    expect(partial![1]).toBeGreaterThan(50 * MiB);

    // Space freed, the browser's own download resumed (as its downloads page would): the file ends exact.
    rig.disk.release();
    const sentBefore = server.stats.bytesSent;
    const refused = await rig.resumeItem(stopped.id).then(
      () => undefined,
      (error: unknown) => String(error),
    );
    const ended = refused
      ? undefined
      : await until(
          'the resumed download to end',
          async () => {
            const item = (await rig.items()).find((i) => i.id === stopped.id);
            return item && item.state !== 'in_progress' ? item : undefined;
          },
          60_000,
        );
    const refetched = server.stats.bytesSent - sentBefore;
    console.log(
      `[disk-room] (b) ${browser}: resumed after freeing space: ${refused ?? JSON.stringify({ state: ended!.state, error: ended!.error, bytesReceived: ended!.bytesReceived })}, ` +
        `${mb(refetched)} sent (the rest: ${mb(size - stopped.bytesReceived)}); folder ${JSON.stringify(folder(rig.downloads))}; free ${mb(rig.disk.free())}`,
    );
    if (ended?.state === 'complete') {
      expect((await rig.list()).jobs).toEqual([]);
      expect(refetched).toBeLessThan(size - stopped.bytesReceived + 16 * MiB); // resumed, not started over
      const saved = await waitForFile(rig.downloads, name, size, 10_000);
      expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
    } else {
      if (browser === 'chromium') {
        // Measured: headless Chromium under Playwright cancels a download resumed after FILE_NO_SPACE (USER_CANCELED, its
        // partial "Unconfirmed N.crdownload" deleted), with Stitch's take-over on or off: the browser's, not Stitch's.
        expect(ended?.error).toBe('USER_CANCELED');
      } else {
        // Firefox says the download cannot be resumed (canResume: false after FILE_FAILED): the notice says to download it
        // again where the browser cannot resume it.
        expect(refused).toBeDefined();
      }
      // What a person does next: the link again. The file ends exact on the freed disk.
      await rig.click();
      const saved = await exactFileIn(rig.downloads, size, 60_000);
      expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
      const again = await rig.list();
      console.log(
        `[disk-room] (b) ${browser}: clicked again: ${JSON.stringify(folder(rig.downloads))}; free ${mb(rig.disk.free())}; ` +
          `Stitch's jobs ${JSON.stringify(again.jobs.map((j) => ({ state: j.state, takenOver: j.takenOver })))}; notices ${JSON.stringify(again.notices.map((n) => n.message))}`,
      );
    }
  });

  test('(c) the disk fills during a download Stitch took over: paused in words of room, its bytes kept; freed and resumed, exact', async () => {
    const size = 120 * MiB;
    const seed = 4803;
    const name = 'fills-midway.bin';
    // One rate for all of Stitch's connections, so that the disk is filled well before the end.
    const server = await mirror({ size, seed, filename: name, rate: 20 * MiB });
    const rig = await rigOn(browser, 512 * MiB, server.url, TAKE_ALL);
    const before = rig.disk.free();
    expect(before).toBeGreaterThan(2 * size + 64 * MiB); // fits twice at the start
    await rig.click();
    const running = await until(
      '30 MiB of the job Stitch took over',
      async () => (await rig.list()).jobs.find((j) => j.received > 30 * MiB),
      60_000,
    );
    expect(running.takenOver).toBe(true);
    rig.disk.leave(40 * MiB);
    const filledAt = Date.now();

    const paused = await until(
      'the job to pause for room',
      async () => (await rig.list()).jobs.find((j) => j.state !== 'running' && j.state !== 'queued'),
      30_000,
    );
    const popup = await until(
      'the row to say why',
      async () => {
        const words = await rig.popup();
        return words.rows.find((r) => r.error) ? words : undefined;
      },
      5_000,
    ).catch(() => rig.popup());
    console.log(
      `[disk-room] (c) ${browser}: paused ${Date.now() - filledAt} ms after the fill; job ${JSON.stringify({
        state: paused.state,
        errorCode: paused.errorCode,
        error: paused.error,
        failure: paused.failure,
        received: paused.received,
      })}; popup ${JSON.stringify(popup.rows)}; free ${mb(rig.disk.free())}`,
    );
    expect(paused.state).toBe('paused');
    expect(paused.errorCode).toBe('storage-full');
    if (browser === 'chromium') {
      // How much more is needed and how much is free, in numbers and in the row's words.
      expect(paused.failure?.room, 'failure.room').toMatchObject({ needed: expect.any(Number), free: expect.any(Number) });
      expect(paused.failure?.room?.needed ?? 0).toBeGreaterThanOrEqual(size - paused.received);
      expect(popup.rows[0]?.error).toMatch(STORAGE_FULL_ROOM);
    } else {
      // Firefox tells Stitch a share of the disk's size, not what is free: no numbers it could stand by, the full disk said.
      expect(paused.failure?.room).toBeUndefined();
      expect(popup.rows[0]?.error).toBe('The disk is full. Stitch kept what it downloaded: free some space, then resume.');
    }
    expect(popup.rows[0]?.error).toMatch(/free some space, then (?:press )?resume/i);
    // Paused: its bytes stay and nothing more is fetched. What it keeps is what the store holds: in Firefox the
    // view may still count, for a few seconds, blocks whose writes the full disk refused (69.5 MB, then 67.3 MB).
    await new Promise((r) => setTimeout(r, 3_000));
    const still = (await rig.list()).jobs[0]!;
    expect(still.state).toBe('paused');
    expect(still.received).toBeGreaterThanOrEqual(30 * MiB);
    const sentWhilePaused = server.stats.bytesSent;
    await new Promise((r) => setTimeout(r, 2_000));
    expect(server.stats.bytesSent).toBe(sentWhilePaused);

    rig.disk.release();
    const sentBefore = server.stats.bytesSent;
    expect(await rig.jobAction(still.id, 'resume')).toBe(true);
    const saved = await waitForFile(rig.downloads, name, size, 90_000);
    expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
    await until('the job to be saved', async () => (await rig.list()).jobs[0]?.state === 'saved', 20_000);
    const refetched = server.stats.bytesSent - sentBefore;
    console.log(`[disk-room] (c) ${browser}: ${mb(still.received)} kept at the pause; ${mb(refetched)} sent after Resume`);
    expect(refetched).toBeLessThan(size - still.received + 16 * MiB); // the kept bytes were not fetched again
    expect(Object.keys(folder(rig.downloads))).toEqual([name]);
  });
});

test('(a) on a disk nearly full whose quota is larger, Firefox: Stitch cannot see the disk; the save that fails says why, keeps the file, and Retry saves it exact', async () => {
  // Firefox tells Stitch a share of the disk's size, not what is free: on 512 MiB, a persisted quota of 256 MiB, so
  // a 120 MiB file with 150 MiB free is taken over, stored, and its save meets the full disk.
  const size = 120 * MiB;
  const seed = 4805;
  const name = 'fits-once-large-disk.bin';
  const server = await mirror({ size, seed, filename: name, connectionRate: 25 * MiB });
  const rig = await rigOn('firefox', 512 * MiB, server.url, TAKE_ALL);
  rig.disk.leave(150 * MiB);
  const before = rig.disk.free();
  const low = lowestFree(rig.disk);
  await rig.click();
  const failed = await until(
    'the save to fail, or the file',
    async () => {
      if (folder(rig.downloads)[name] === size && !Object.keys(folder(rig.downloads)).some((f) => /\.part$/.test(f))) return 'file';
      return (await rig.list()).jobs.find((j) => j.state === 'failed');
    },
    90_000,
  );
  low.stop();
  const popup = await rig.popup();
  console.log(
    `[disk-room] (a, 512 MiB disk) firefox: ${mb(size)} file, ${mb(before)} free at the click; lowest free ${mb(low.lowest())}; ` +
      `${failed === 'file' ? 'file' : JSON.stringify({ state: failed.state, errorCode: failed.errorCode, error: failed.error })}; popup rows ${JSON.stringify(popup.rows)}`,
  );
  if (failed !== 'file') {
    expect(failed.errorCode).toBe('save-write-failed');
    expect(popup.rows[0]?.error).toBe(
      'The browser could not write the file, most often because its disk is full. The downloaded file is kept: free some space, then press Retry.',
    );
    rig.disk.release();
    const sentBefore = server.stats.bytesSent;
    expect(await rig.jobAction(failed.id, 'retry')).toBe(true);
    await until('the job to be saved', async () => (await rig.list()).jobs[0]?.state === 'saved', 60_000);
    // Saved from the store: nothing fetched again.
    expect(server.stats.bytesSent - sentBefore).toBeLessThan(1 * MiB);
  }
  const saved = await exactFileIn(rig.downloads, size, 30_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
});

/** Peak disk use, Stitch against the browser alone: the same 100 MiB file on a 400 MiB disk. */
const peaks: string[] = [];
const PEAK_FILE = 100 * MiB;
const PEAK_DISK = 400 * MiB;

describe.each<BrowserName>(['chromium', 'firefox'])('%s, peak disk use for one file', (browser) => {
  test.each<[string, Partial<Settings>]>([
    ['Stitch', TAKE_ALL],
    // The same browser and settings, but the server's site left to the browser (Excluded sites).
    ['the browser alone', { ...TAKE_ALL, excludedSites: ['127.0.0.1'] }],
  ])('through %s', async (through, settings) => {
    const seed = 4804;
    const name = 'peak.bin';
    const server = await mirror({ size: PEAK_FILE, seed, filename: name, connectionRate: 25 * MiB });
    const rig = await rigOn(browser, PEAK_DISK, server.url, settings);
    const atClick = rig.disk.free();
    const low = lowestFree(rig.disk);
    const started = Date.now();
    await rig.click();
    const saved = await waitForFile(rig.downloads, name, PEAK_FILE, 90_000);
    const took = Date.now() - started;
    expect(await fileSha256(saved)).toBe(await contentSha256(seed, PEAK_FILE));
    const { jobs } = await rig.list();
    if (through === 'Stitch') {
      expect(jobs.map((j) => j.takenOver)).toEqual([true]);
      await until('the job to be saved', async () => (await rig.list()).jobs[0]?.state === 'saved', 20_000);
    } else expect(jobs).toEqual([]);
    await new Promise((r) => setTimeout(r, 2_000)); // the store gives its copy back
    low.stop();
    const after = rig.disk.free();
    peaks.push(
      `| ${browser} | ${through} | ${mb(PEAK_DISK - low.lowest())} | ${mb(atClick - low.lowest())} | ${mb(atClick - after)} | ${(took / 1000).toFixed(1)} s |`,
    );
  });
});

afterAll(() => {
  if (peaks.length === 0) return;
  console.log(
    [
      `[disk-room] peak disk use, a ${mb(PEAK_FILE)} file on a ${mb(PEAK_DISK)} disk (profile and download folder on it):`,
      '| browser | through | peak use (size − lowest free) | rise over the click | left after (file + profile growth) | time to the file |',
      '|---|---|---|---|---|---|',
      ...peaks,
    ].join('\n'),
  );
});
