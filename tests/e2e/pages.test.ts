import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import { sampleRanges } from '../../src/engine/relink-evidence';
import { contentSha256 } from '../support/content';
import { horizontalOverflow, seriousViolations } from './support/axe';
import { extensionPage, request } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { alwaysTakeOver, browserWith, bypassNext, linkPage, MiB, mirror, profile } from './support/setup';

const DOCS = resolve(import.meta.dirname, '../../docs');

test('the popup shows progress and completion, and pauses and resumes a download', async () => {
  const size = 24 * MiB;
  const seed = 21;
  const server = await mirror({ size, seed, filename: 'popup-test.iso', rate: 2 * MiB });
  const page = await linkPage([{ id: 'f', href: server.url, text: 'file' }]);
  const p = profile();
  const browser = await browserWith(p);
  await alwaysTakeOver(browser);
  const tab = await browser.context.newPage();
  await tab.goto(page);
  await tab.click('#f');

  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 480 });
  const row = popup.getByTestId('job-row');
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('running');
  await expect.poll(() => row.getByTestId('job-filename').textContent(), { timeout: 10_000 }).toContain('popup-test.iso');
  const progress = () => row.getByTestId('job-progress').evaluate((el: HTMLProgressElement) => el.value / (el.max || 1));
  await expect.poll(progress, { timeout: 20_000 }).toBeGreaterThan(0.1);

  await row.getByTestId('job-pause').click();
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 10_000 }).toBe('paused');
  const sentWhenPaused = server.stats.bytesSent;
  await new Promise((r) => setTimeout(r, 1500));
  expect(server.stats.bytesSent - sentWhenPaused).toBeLessThan(1 * MiB); // nothing more is fetched
  const pausedAt = await progress();

  await row.getByTestId('job-resume').click();
  server.setRate(undefined); // the rest need not take 10 s: uncapped, the resumed download ends in a second
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 60_000 }).toBe('saved');
  expect(await progress()).toBeGreaterThan(pausedAt);
  const saved = await waitForFile(p.downloads, 'popup-test.iso', size, 30_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  const resumed = server.stats.requests.filter((r) => r.startedAt > 0 && /bytes=[1-9]\d*-/.test(r.range ?? ''));
  expect(resumed.length).toBeGreaterThan(0); // resumed with a range, not from zero
});

test('a mirror rule set in the options page makes a download use two mirrors', async () => {
  const size = 32 * MiB;
  const seed = 22;
  // Two servers of the same file, each capped, so using both is visibly faster.
  const primary = await mirror({ size, seed, filename: 'mirrored.bin', rate: 4 * MiB });
  const second = await mirror({ size, seed, filename: 'mirrored.bin', rate: 4 * MiB });
  const page = await linkPage([{ id: 'f', href: primary.url, text: 'file' }]);
  const p = profile();
  const browser = await browserWith(p);

  const options = await extensionPage(browser, 'options.html');
  await options.setViewportSize({ width: 900, height: 1400 });
  await options.getByTestId('mirror-rule-add').click();
  const rule = options.getByTestId('mirror-rule').last();
  await rule.getByTestId('mirror-rule-pattern').fill(`127.0.0.1:${primary.port}/`);
  await rule.getByTestId('mirror-rule-mirrors').fill(`${second.origin}/`);
  await options.getByTestId('settings-save').click();
  await expect.poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 }).toMatch(/saved/i);

  const tab = await browser.context.newPage();
  await tab.goto(page);
  await tab.click('#f');
  const saved = await waitForFile(p.downloads, 'mirrored.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Both servers sent a real share of the file.
  expect(primary.stats.bytesSent).toBeGreaterThan(size / 8);
  expect(second.stats.bytesSent).toBeGreaterThan(size / 8);
  await until('the options page to still answer', () => options.getByTestId('settings-form').isVisible(), 5_000);
});

test('a per-site override set in the options page is the most connections the server sees', async () => {
  const size = 8 * MiB;
  const seed = 23;
  // Each connection is capped, so a second one would pay and the engine would open it (it starts with two).
  const server = await mirror({ size, seed, filename: 'one-at-a-time.bin', rate: 16 * MiB, connectionRate: 4 * MiB });
  const p = profile();
  const browser = await browserWith(p);
  const options = await extensionPage(browser, 'options.html');
  await options.getByTestId('setting-connections-per-site').fill('127.0.0.1 1');
  await options.getByTestId('settings-save').click();
  await expect.poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 }).toMatch(/saved/i);

  await request(options, { type: 'add-url', url: server.url });
  const saved = await waitForFile(p.downloads, 'one-at-a-time.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  expect(server.stats.peakConnections).toBe(1);
});

/** The job's stored byte ranges, as the player port reports them. */
async function storedRanges(page: Page, id: string): Promise<{ start: number; end: number }[]> {
  return page.evaluate(
    (jobId) =>
      new Promise((resolve) => {
        type Port = { postMessage(m: unknown): void; disconnect(): void; onMessage: { addListener(l: (m: never) => void): void } };
        const { runtime } = (globalThis as unknown as { chrome: { runtime: { connect(info: { name: string }): Port } } }).chrome;
        const port = runtime.connect({ name: 'stitch-player' });
        port.onMessage.addListener((message: { type: string; stored: { start: number; end: number }[] }) => {
          if (message.type !== 'player-state') return;
          port.disconnect();
          resolve(message.stored);
        });
        port.postMessage({ type: 'attach', id: jobId });
      }),
    id,
  );
}

/** The popup as a person sees it with several jobs: one per state, a dropped mirror, a long name. */
async function popupWithJobs() {
  const p = profile();
  // A file of this name is already in the folder: the browser saves "shown.bin" as "shown (1).bin".
  writeFileSync(resolve(p.downloads, 'shown.bin'), 'an older file');
  const longName = `${'a-very-long-file-name-that-goes-on-'.repeat(4)}${'x'.repeat(120)}`.slice(0, 116) + '.iso';
  const saved = await mirror({ size: 256 * 1024, seed: 31, filename: 'shown.bin' });
  const running = await mirror({ size: 64 * MiB, seed: 32, filename: longName, rate: 1 * MiB });
  const liar = await mirror({ size: 64 * MiB, seed: 99, filename: longName, rate: 1 * MiB });
  const helper = await mirror({ size: 64 * MiB, seed: 32, filename: longName, rate: 1 * MiB });
  const paused = await mirror({ size: 32 * MiB, seed: 33, filename: 'paused-video.mkv', rate: 512 * 1024 });
  const failed = await mirror({ size: MiB, seed: 34, filename: 'gone.zip', faults: { errorStatus: { status: 404 } } });
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });

  const { settings } = (await request(popup, { type: 'get-settings' })).value!;
  const rule = { pattern: `127.0.0.1:${running.port}/`, mirrors: [`${liar.origin}/`, `${helper.origin}/`] };
  expect((await request(popup, { type: 'set-settings', settings: { ...settings, mirrorRules: [rule] } })).ok).toBe(true);
  const add = async (url: string) => (await request(popup, { type: 'add-url', url })).value!.job.id;
  const ids = {
    saved: await add(saved.url),
    failed: await add(failed.url),
    paused: await add(paused.url),
    running: await add(running.url),
  };
  const row = (id: string) => popup.locator(`[data-job-id="${id}"]`);
  await expect.poll(() => row(ids.paused).getAttribute('data-state'), { timeout: 20_000 }).toBe('running');
  await request(popup, { type: 'job-action', action: 'pause', id: ids.paused });
  for (const [id, state] of [
    [ids.saved, 'saved'],
    [ids.failed, 'failed'],
    [ids.paused, 'paused'],
  ] as const) {
    await expect.poll(() => row(id).getAttribute('data-state'), { timeout: 30_000 }).toBe(state);
  }
  // The lying mirror is dropped, and the two honest sources share the work.
  await expect.poll(() => row(ids.running).locator('.mirror-legend li.dropped').count(), { timeout: 30_000 }).toBe(1);
  await expect.poll(() => row(ids.running).locator('.mirror-legend li:not(.dropped)').count(), { timeout: 30_000 }).toBe(2);
  return { p, browser, popup, row, ids, longName };
}

test('the popup at 400×600: the name on disk, Open, dragging the file out, no sideways overflow, focus after Pause/Resume, axe in light and dark', async () => {
  const { p, popup, row, ids, longName } = await popupWithJobs();

  expect(await horizontalOverflow(popup)).toEqual([]);
  expect(await row(ids.saved).getByTestId('job-filename').textContent()).toBe('shown (1).bin');
  expect(await row(ids.running).getByTestId('job-filename').textContent()).toBe(longName);

  // Open is called from the click (a user gesture); from the worker Chrome refused it.
  await row(ids.saved).getByTestId('job-open').click();
  await new Promise((r) => setTimeout(r, 1500));
  expect(await popup.locator('.action-error').isVisible()).toBe(false);

  // Dragged onto a drop zone, the saved row carries the file itself: the file:// URL of the file on disk.
  // This Chromium has no downloads.drag (which would drag outside the page's reach), so the page's own drag is what a drop gets.
  expect(await popup.evaluate(() => typeof (chrome as unknown as { downloads: { drag?: unknown } }).downloads.drag)).toBe('undefined');
  await expect.poll(() => row(ids.saved).getAttribute('draggable'), { timeout: 10_000 }).toBe('true');
  expect(await row(ids.saved).getAttribute('title')).toBe('Drag to a folder or another app to copy the file');
  const zone = await dropZone(popup);
  await row(ids.saved).getByTestId('job-filename').dragTo(zone);
  const dropped = JSON.parse((await zone.getAttribute('data-dropped'))!) as { types: string[]; uris: string };
  expect(dropped.types).toContain('text/uri-list');
  expect(dropped.uris).toMatch(/^file:\/\/\//);
  expect(fileURLToPath(dropped.uris)).toBe(join(p.downloads, 'shown (1).bin'));
  expect(await fileSha256(fileURLToPath(dropped.uris))).toBe(await contentSha256(31, 256 * 1024));
  await zone.evaluate((element) => element.remove());

  // Pause and Resume by keyboard: focus stays on the row's first button, now the other action.
  await row(ids.paused).getByTestId('job-resume').focus();
  await popup.keyboard.press('Enter');
  await expect.poll(() => popup.evaluate(() => document.activeElement?.getAttribute('data-testid')), { timeout: 10_000 }).toBe('job-pause');
  expect(await popup.evaluate(() => document.activeElement?.closest('[data-job-id]')?.getAttribute('data-job-id'))).toBe(ids.paused);
  await popup.keyboard.press('Enter');
  await expect
    .poll(() => popup.evaluate(() => document.activeElement?.getAttribute('data-testid')), { timeout: 10_000 })
    .toBe('job-resume');
  await popup.evaluate(() => {
    (document.activeElement as HTMLElement | null)?.blur();
    document.querySelector('.jobs')?.scrollTo(0, 0);
  });

  for (const scheme of ['light', 'dark'] as const) {
    expect(await seriousViolations(popup, scheme), scheme).toEqual([]);
    expect(await horizontalOverflow(popup), scheme).toEqual([]);
  }
  // The README's pictures show every row at once, the running one with its details: the list
  // unclipped (the real popup scrolls it).
  await row(ids.running).getByTestId('job-details-toggle').click();
  await popup.setViewportSize({ width: 400, height: 860 });
  await popup.addStyleTag({ content: 'body { max-height: none !important; }' });
  for (const scheme of ['light', 'dark'] as const) {
    await popup.emulateMedia({ colorScheme: scheme });
    await popup.screenshot({ path: resolve(DOCS, scheme === 'light' ? 'popup.png' : 'popup-dark.png'), fullPage: true });
  }
});

/** A strip at the foot of the page that takes any drop and keeps what it got (types, text/uri-list) in data-dropped. */
async function dropZone(page: Page) {
  await page.evaluate(() => {
    const zone = document.createElement('div');
    zone.id = 'drop-zone';
    zone.style.cssText = 'position: fixed; inset: auto 0 0 0; height: 80px; z-index: 10; background: #fff';
    zone.addEventListener('dragover', (event) => event.preventDefault());
    zone.addEventListener('drop', (event) => {
      event.preventDefault();
      const data = event.dataTransfer!;
      zone.dataset.dropped = JSON.stringify({ types: [...data.types], uris: data.getData('text/uri-list') });
    });
    document.body.append(zone);
  });
  return page.locator('#drop-zone');
}

test('options and player pages pass axe in light and dark', async () => {
  const p = profile();
  const server = await mirror({ size: MiB, seed: 35, filename: 'notes.bin' });
  const browser = await browserWith(p);
  const options = await extensionPage(browser, 'options.html');
  await options.setViewportSize({ width: 900, height: 1400 });
  await options.getByTestId('mirror-rule-add').click();
  await options.getByTestId('mirror-rule-pattern').last().fill('releases.example.org/');
  await options.getByTestId('mirror-rule-mirrors').last().fill('https://mirror.example.net/releases/');
  for (const scheme of ['light', 'dark'] as const) {
    expect(await seriousViolations(options, scheme), scheme).toEqual([]);
    await options.screenshot({ path: resolve(DOCS, scheme === 'light' ? 'options.png' : 'options-dark.png') });
  }
  const { job } = (await request(options, { type: 'add-url', url: server.url })).value!;
  const player = await extensionPage(browser, `player.html?id=${job.id}`);
  await expect.poll(() => player.getByTestId('player-state').textContent(), { timeout: 20_000 }).not.toBe('');
  for (const scheme of ['light', 'dark'] as const) expect(await seriousViolations(player, scheme), scheme).toEqual([]);

  // player.html?url= on a file that is not media: the download it started is stopped, not left running.
  const notMedia = await mirror({ size: 64 * MiB, seed: 40, filename: 'archive.zip', contentType: 'application/zip', rate: 2 * MiB });
  const started = await extensionPage(browser, `player.html?url=${encodeURIComponent(notMedia.url)}`);
  await expect
    .poll(() => started.getByTestId('player-message').textContent(), { timeout: 20_000 })
    .toMatch(/not audio or video.*stopped the download/);
  const jobs = (await request(options, { type: 'list-jobs' })).value!.jobs as { url: string; state: string; undoUntil?: number }[];
  expect(jobs.find((j) => j.url === notMedia.url)).toMatchObject({ state: 'paused', undoUntil: expect.any(Number) });
  const sent = notMedia.stats.bytesSent;
  await new Promise((r) => setTimeout(r, 1500));
  expect(notMedia.stats.bytesSent - sent).toBeLessThan(256 * 1024);
});

test('a server answering 503 shows Retrying within 2 s, not a healthy download', async () => {
  const p = profile();
  const server = await mirror({ size: MiB, seed: 36, filename: 'busy.bin', faults: { errorStatus: { status: 503 } } });
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  const started = Date.now();
  const { job } = (await request(popup, { type: 'add-url', url: server.url })).value!;
  const row = popup.locator(`[data-job-id="${job.id}"]`);
  await expect
    .poll(() => row.getByTestId('job-state').textContent(), { timeout: 2_000, interval: 50 })
    .toBe('Retrying')
    .catch(async (error: unknown) => {
      // Whether the browser was late to ask or the popup late to say it: the requests' times and the job as the worker sees it.
      const asked = server.stats.requests.map((r) => `${r.status} at ${r.startedAt - started} ms`).join(', ');
      const jobs = (await request(popup, { type: 'list-jobs' })).value!.jobs;
      throw new Error(`${String(error)}; requests: ${asked || 'none'}; job: ${JSON.stringify(jobs)}`);
    });
  const shownAfter = Date.now() - started;
  console.log(`503: Retrying shown ${shownAfter} ms after the download was added`);
  expect(shownAfter).toBeLessThan(2_000);
  // The cause once, the attempt that failed, and when Stitch gives up: no promise to keep trying for ever.
  expect(await row.getByTestId('job-retrying').textContent()).toMatch(
    /^The server is busy or down for maintenance \(error 503\)\. Attempt \d of 8 failed; Stitch tries again by itself and gives up after attempt 8\.$/,
  );
  expect(await popup.locator('.summary').textContent()).not.toMatch(/downloading/);
});

test('the bypass leaves the next download to the browser; a job taken over can be handed back', async () => {
  const size = 24 * MiB;
  const left = await mirror({ size, seed: 37, filename: 'left.bin' });
  const taken = await mirror({ size, seed: 38, filename: 'handed.bin', rate: 3 * MiB });
  const page = await linkPage([
    { id: 'left', href: left.url, text: 'left' },
    { id: 'taken', href: taken.url, text: 'taken' },
  ]);
  const p = profile();
  const browser = await browserWith(p);
  await alwaysTakeOver(browser);
  const popup = await extensionPage(browser, 'popup.html');
  const { bypass, tab } = await bypassNext(browser, popup, page);
  await tab.click('#left');
  const saved = await waitForFile(p.downloads, 'left.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(37, size));
  expect(left.stats.requests).toHaveLength(1); // the browser's own request: Stitch asked nothing
  expect((await request(popup, { type: 'list-jobs' })).value!.jobs).toEqual([]);
  await expect.poll(() => popup.getByTestId('notice').first().textContent(), { timeout: 5_000 }).toMatch(/as you asked/);
  await expect.poll(() => bypass.getAttribute('aria-pressed'), { timeout: 5_000 }).toBe('false');

  // The bypass was used up: the next download is taken over, and handed back on request.
  await tab.click('#taken');
  const row = popup.getByTestId('job-row');
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('running');
  await row.getByTestId('job-details-toggle').click();
  await row.getByTestId('job-hand-back').click();
  await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
  taken.setRate(undefined); // handed back: uncapped, the browser's download ends in a second
  const handed = await waitForFile(p.downloads, 'handed.bin', size, 60_000);
  expect(await fileSha256(handed)).toBe(await contentSha256(38, size));
});

test('a new link to another size says so in the units of the row (1 MB = 1,048,576 bytes), and keeps the stored part', async () => {
  const size = Math.round(50.3 * MiB);
  const old = await mirror({ size, seed: 48, filename: 'resized.bin', rate: 2 * MiB });
  const smaller = await mirror({ size: 48 * MiB, seed: 48, filename: 'resized.bin', path: '/other/resized.bin' });
  const browser = await browserWith(profile());
  const popup = await extensionPage(browser, 'popup.html');
  const { job } = (await request(popup, { type: 'add-url', url: old.url })).value!;
  const row = popup.locator(`[data-job-id="${job.id}"]`);
  await expect.poll(() => row.getByTestId('job-size').textContent(), { timeout: 20_000 }).toMatch(/ of 50\.3 MB/);
  await row.getByTestId('job-pause').click();
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 10_000 }).toBe('paused');

  await row.getByTestId('job-details-toggle').click();
  await row.getByTestId('job-relink').click();
  await row.getByTestId('job-relink-input').fill(smaller.url);
  await row.getByTestId('job-relink-submit').click();
  await expect
    .poll(() => row.getByTestId('job-relink-error').textContent(), { timeout: 30_000 })
    .toBe(
      'This link does not give the same file. The new link serves 48 MB, not the 50.3 MB of this download. ' +
        'The stored part is kept; start over to download it all from this link.',
    );
  expect(await row.getAttribute('data-state')).toBe('paused');
});

test('a new link on another server continues a paused job from the stored bytes, fetching only samples of them again', async () => {
  const size = 16 * MiB;
  const seed = 39;
  const old = await mirror({ size, seed, filename: 'expiring.bin', rate: 2 * MiB });
  const renewed = await mirror({ size, seed, filename: 'expiring.bin', path: '/renewed/expiring.bin' });
  const p = profile();
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  const { job } = (await request(popup, { type: 'add-url', url: old.url })).value!;
  const row = popup.locator(`[data-job-id="${job.id}"]`);
  const progress = () => row.getByTestId('job-progress').evaluate((el: HTMLProgressElement) => el.value);
  await expect.poll(progress, { timeout: 20_000 }).toBeGreaterThan(2 * MiB);
  await row.getByTestId('job-pause').click();
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 10_000 }).toBe('paused');
  old.setFaults({ errorStatus: { status: 403 } }); // the link expired
  const ranges = await storedRanges(popup, job.id);
  const stored = ranges.reduce((sum, r) => sum + r.end - r.start, 0);
  expect(stored).toBeGreaterThan(2 * MiB);

  await row.getByTestId('job-details-toggle').click();
  await row.getByTestId('job-relink').click();
  await row.getByTestId('job-relink-input').fill(renewed.url);
  await row.getByTestId('job-relink-submit').click();
  // The form goes once the new link is taken; its focus goes to the row, not to the page.
  await expect.poll(() => row.getByTestId('job-relink-form').count(), { timeout: 30_000 }).toBe(0);
  expect(await popup.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('job-details-toggle');
  expect(await popup.evaluate(() => document.activeElement?.closest('[data-job-id]')?.getAttribute('data-job-id'))).toBe(job.id);
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 60_000 }).toBe('saved');
  const saved = await waitForFile(p.downloads, 'expiring.bin', size, 30_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Of the stored bytes, only the samples compared with the other server's were asked again.
  const samples = sampleRanges(ranges);
  for (const r of renewed.stats.requests) {
    const [, from, to] = /bytes=(\d+)-(\d*)/.exec(r.range ?? '') ?? [];
    const start = Number(from ?? 0);
    const end = to ? Number(to) + 1 : size;
    const sample = samples.some((s) => s.start === start && s.end === end);
    expect(sample || ranges.every((s) => end <= s.start || s.end <= start), r.range).toBe(true);
  }
  const sampled = samples.reduce((sum, s) => sum + s.end - s.start, 0);
  expect(renewed.stats.bytesSent).toBeLessThanOrEqual(size - stored + 1 + sampled); // + the one probe byte
});

test('Cancel can be undone from the popup, with focus on Undo; without undo the job and its bytes go', async () => {
  const server = await mirror({ size: 32 * MiB, seed: 42, filename: 'maybe.bin', rate: 2 * MiB });
  const p = profile();
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  const { job } = (await request(popup, { type: 'add-url', url: server.url })).value!;
  const row = popup.locator(`[data-job-id="${job.id}"]`);
  const progress = () => row.getByTestId('job-progress').evaluate((el: HTMLProgressElement) => el.value);
  await expect.poll(progress, { timeout: 20_000 }).toBeGreaterThan(MiB);

  await row.getByTestId('job-details-toggle').click();
  await row.getByTestId('job-cancel').focus();
  await popup.keyboard.press('Enter');
  await expect.poll(() => row.getByTestId('job-state').textContent(), { timeout: 10_000 }).toBe('Cancelled');
  await expect.poll(() => popup.evaluate(() => document.activeElement?.getAttribute('data-testid')), { timeout: 5_000 }).toBe('job-undo');
  const kept = await progress();
  await popup.keyboard.press('Enter');
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 10_000 }).toBe('running');
  expect(await progress()).toBeGreaterThanOrEqual(kept); // the stored bytes were kept

  await row.getByTestId('job-cancel').click(); // the details stay open after Undo
  await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(0);
  expect((await request(popup, { type: 'list-jobs' })).value!.jobs).toEqual([]);
});
