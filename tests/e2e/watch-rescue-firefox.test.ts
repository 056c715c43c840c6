import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { fileSha256, until, waitForFile } from './support/files';
import { MiB, mirror } from './support/setup';
import { clickWatchedInFirefox, resumes } from './support/watched';

test('Firefox: a watched download broken by resets is resumed by Stitch (Firefox never retries by itself) and ends exact', async () => {
  const size = 24 * MiB;
  const seed = 63;
  // Four responses reset: the browser's request, Stitch's 1-byte probe (too short to be cut) and the first resumes.
  const file = await mirror({ size, seed, filename: 'watched-ff.bin', rate: 8 * MiB, faults: { resetAfterMs: 400, faultRequests: 4 } });
  const { downloads, stitchTook } = await clickWatchedInFirefox(file);

  const saved = await waitForFile(downloads, 'watched-ff.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Firefox's own download finished it, resumed with ranges for the rest; Stitch took nothing over.
  expect(resumes(file, size)).toBeGreaterThanOrEqual(2);
  expect(await stitchTook()).toEqual({ jobs: [], notices: [] });
});

test("Firefox: a watched download whose server stops sending is paused and resumed, and Firefox's fresh request ends it exact", async () => {
  const size = 24 * MiB;
  const seed = 65;
  // The browser's request stalls after 4 MiB (Stitch's 1-byte probe, the second request, is too short to stall).
  const file = await mirror({
    size,
    seed,
    filename: 'stalled-ff.bin',
    rate: 8 * MiB,
    faults: { stallAfterBytes: 4 * MiB, faultRequests: 2 },
  });
  // The shortest stall timeout the options allow.
  const { downloads, stitchTook } = await clickWatchedInFirefox(file, { settings: { stallSeconds: 5 } });

  const saved = await waitForFile(downloads, 'stalled-ff.bin', size, 40_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  expect(resumes(file, size)).toBe(1);
  expect(await stitchTook()).toEqual({ jobs: [], notices: [] });
});

test('Firefox: a watched download shows in the popup with growing progress; Take over makes Stitch finish it exact, and Firefox’s own is gone', async () => {
  const size = 64 * MiB;
  const seed = 68;
  // One rate for all connections: measured, the download stays with the browser.
  const file = await mirror({ size, seed, rate: 4 * MiB, filename: 'watched-popup-ff.bin' });
  const { downloads, ui, background, clipUrl } = await clickWatchedInFirefox(file, { withPopup: true });
  /** The watched row in the popup's frame, as the user sees it (undefined while there is none). */
  const row = () =>
    ui.evaluate(() => {
      const popup = document.querySelector<HTMLIFrameElement>('#popup')?.contentDocument;
      const item = popup?.querySelector<HTMLElement>('[data-testid="watched-row"]');
      const bar = item?.querySelector<HTMLProgressElement>('[data-testid="watched-progress"]');
      if (!item || !bar || popup?.querySelector<HTMLElement>('[data-testid="watched-list"]')?.hidden) return undefined;
      const text = (id: string) => item.querySelector(`[data-testid="${id}"]`)?.textContent ?? '';
      return {
        downloadId: Number(item.dataset.downloadId),
        name: text('watched-name'),
        state: text('watched-state'),
        received: bar.value,
        max: bar.max,
      };
    });

  const first = await until('the watched row', row, 20_000);
  // Watched. The rest must outlast the test's steps however long the measured start took under load:
  // at 4 MiB/s a slow start once left Firefox too little to do before the click.
  file.setRate(MiB);
  expect(first).toMatchObject({ name: 'watched-popup-ff.bin', state: 'Downloading in the browser', max: size });
  await until('the bar to grow', async () => ((await row())?.received ?? 0) > first.received, 5_000);
  expect((await row())!.received).toBeLessThan(size);

  const clicked = await ui.evaluate(() => {
    const button = document
      .querySelector<HTMLIFrameElement>('#popup')
      ?.contentDocument?.querySelector<HTMLButtonElement>('[data-testid="watched-take-over"]');
    button?.click();
    return Boolean(button);
  });
  expect(clicked).toBe(true);
  await until('the row to go', async () => (await row()) === undefined, 5_000);
  file.setRate(undefined); // taken over: uncapped, Stitch's download ends in a second, not in ~10 s
  const saved = await waitForFile(downloads, 'watched-popup-ff.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  const { jobs, notices } = (await background({ type: 'list-jobs' })).value!;
  expect(jobs.filter((j) => j.url !== clipUrl).map((j) => [j.url, j.takenOver])).toEqual([[file.url, true]]);
  expect(notices.map(({ message, url }) => ({ message, url }))).toEqual([
    { message: "Stitch took over the browser's download, as you asked.", url: file.url },
  ]);
  // Firefox's own download is gone from its list.
  const left = await ui.evaluate(
    (id) =>
      (globalThis as unknown as { browser: { downloads: { search(q: object): Promise<unknown[]> } } }).browser.downloads.search({ id }),
    first.downloadId,
  );
  expect(left).toEqual([]);
});
