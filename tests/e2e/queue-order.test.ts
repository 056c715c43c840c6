import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import type { JobView } from '../../src/messages';
import { extensionPage, request } from './support/chromium';
import { until } from './support/files';
import { browserWith, changeSettings, linkPage, MiB, mirror, profile } from './support/setup';

/** The jobs as the background has them. */
async function jobs(page: Page): Promise<JobView[]> {
  return (await request(page, { type: 'list-jobs' })).value!.jobs;
}

/** What a person reads on the queued rows, top to bottom: each name and its place. */
async function queuedRows(popup: Page): Promise<string[]> {
  return popup
    .locator('[data-testid="job-row"][data-state="queued"]')
    .evaluateAll((rows) =>
      rows.map(
        (row) =>
          `${row.querySelector('[data-testid="job-filename"]')!.textContent} ${row.querySelector('[data-testid="job-queue-place"]')!.textContent}`,
      ),
    );
}

/** The names on the rows in a state, sorted. */
async function namesIn(popup: Page, state: string): Promise<string[]> {
  const names = await popup.locator(`[data-testid="job-row"][data-state="${state}"]`).getByTestId('job-filename').allTextContents();
  return names.sort();
}

const ORDINALS = ['1st', '2nd', '3rd', '4th', '5th', '6th', '7th', '8th'];
/** part-3 … part-10 at places 1st … 8th: the click order. */
const CLICK_ORDER = ORDINALS.map((place, i) => `part-${i + 3}.bin ${place}`);

test('ten link clicks queue in click order, each queued row showing its place; pause, Cancel + Undo and Cancel all + one Undo keep every place', async () => {
  // Slow enough that nothing finishes while the test looks (the limit is for the server, all downloads together).
  const server = await mirror({ size: 64 * MiB, seed: 61, rate: 1 * MiB, filename: (query) => `part-${query.get('n')}.bin` });
  const links = Array.from({ length: 10 }, (_, i) => ({ id: `l${i + 1}`, href: `${server.url}?n=${i + 1}`, text: `part ${i + 1}` }));
  const page = await linkPage(links);
  const browser = await browserWith(profile());
  await changeSettings(browser, { alwaysTakeOver: true, maxConcurrentJobs: 2 });
  const tab = await browser.context.newPage();
  await tab.goto(page);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });

  // Ten clicks, one after another as a person clicks: each download in a tab of its own.
  for (const [i, link] of links.entries()) {
    await tab.click(`#${link.id}`, { button: 'middle' });
    await until(`download ${i + 1} taken over`, async () => (await jobs(popup)).length === i + 1, 30_000);
  }
  const rowOf = (n: number) => popup.locator('[data-testid="job-row"]').filter({ hasText: `part-${n}.bin` });
  await expect.poll(() => namesIn(popup, 'running'), { timeout: 20_000 }).toEqual(['part-1.bin', 'part-2.bin']);
  await expect.poll(() => queuedRows(popup), { timeout: 10_000 }).toEqual(CLICK_ORDER);
  expect(await rowOf(3).getByTestId('job-state').textContent()).toBe('Queued');

  // A queued download paused for 2 s and resumed: back at its place (3rd), not at the end.
  await rowOf(5).getByTestId('job-details-toggle').click();
  await rowOf(5).getByTestId('job-pause').click();
  await expect.poll(() => rowOf(5).getAttribute('data-state'), { timeout: 10_000 }).toBe('paused');
  await expect
    .poll(() => queuedRows(popup), { timeout: 5_000 })
    .toEqual(CLICK_ORDER.filter((row) => !row.startsWith('part-5.')).map((row, i) => row.replace(/ \S+$/, ` ${ORDINALS[i]}`)));
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await rowOf(5).getByTestId('job-resume').click();
  await expect.poll(() => queuedRows(popup), { timeout: 10_000 }).toEqual(CLICK_ORDER);
  await rowOf(5).getByTestId('job-details-toggle').click();

  // Cancel of the first queued one, then Undo: first again, not last.
  await rowOf(3).getByTestId('job-details-toggle').click();
  await rowOf(3).getByTestId('job-cancel').click();
  await expect.poll(() => rowOf(3).getByTestId('job-state').textContent(), { timeout: 10_000 }).toBe('Cancelled');
  await rowOf(3).getByTestId('job-undo').click();
  await expect.poll(() => queuedRows(popup), { timeout: 10_000 }).toEqual(CLICK_ORDER);

  // Cancel all: every row cancelled, and one Undo for them all (none on the rows).
  await popup.getByTestId('cancel-all').click();
  await expect
    .poll(() => popup.getByTestId('job-state').allTextContents(), { timeout: 10_000 })
    .toEqual(Array.from({ length: 10 }, () => 'Cancelled'));
  expect(await popup.getByTestId('job-undo').count()).toBe(0);
  const undoAll = popup.getByTestId('undo-all');
  expect(await undoAll.count()).toBe(1);
  expect(await popup.getByTestId('undo-all-bar').textContent()).toBe('Cancelled 10 downloads. Undo');
  // The one Undo: the two that ran run again (not queued behind the others), the rest wait in click order.
  await undoAll.click();
  await expect.poll(() => namesIn(popup, 'running'), { timeout: 20_000 }).toEqual(['part-1.bin', 'part-2.bin']);
  await expect.poll(() => queuedRows(popup), { timeout: 10_000 }).toEqual(CLICK_ORDER);
  expect(await popup.getByTestId('undo-all').count()).toBe(0);
  expect((await jobs(popup)).filter((j) => j.undoUntil !== undefined)).toEqual([]);

  // Pause all with a filter typed: only the download shown is paused.
  await popup.getByTestId('job-filter').fill('part-1.');
  await expect.poll(() => popup.locator('[data-testid="job-row"]:visible').count(), { timeout: 5_000 }).toBe(1);
  await popup.getByTestId('pause-all').click();
  await expect.poll(() => rowOf(1).getAttribute('data-state'), { timeout: 10_000 }).toBe('paused');
  await popup.getByTestId('job-filter').fill('');
  // Its slot goes to the queue's front; nothing else was paused.
  await expect.poll(() => namesIn(popup, 'running'), { timeout: 20_000 }).toEqual(['part-2.bin', 'part-3.bin']);
  expect(await namesIn(popup, 'paused')).toEqual(['part-1.bin']);
  expect(await queuedRows(popup)).toEqual(CLICK_ORDER.slice(1).map((row, i) => row.replace(/ \S+$/, ` ${ORDINALS[i]}`)));
});
