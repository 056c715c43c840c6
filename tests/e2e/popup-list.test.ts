import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import type { JobView } from '../../src/messages';
import { horizontalOverflow, seriousViolations } from './support/axe';
import { extensionPage, request } from './support/chromium';
import { until } from './support/files';
import { alwaysTakeOver, browserWith, linkPage, MiB, mirror, profile } from './support/setup';

const focusedTestId = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('data-testid'));
const focusedRowId = (page: Page) => page.evaluate(() => document.activeElement?.closest('[data-job-id]')?.getAttribute('data-job-id'));

/** The jobs as the background has them. */
async function jobs(page: Page): Promise<JobView[]> {
  return (await request(page, { type: 'list-jobs' })).value!.jobs;
}

test('twelve link clicks on one path: queued rows named by the server, told apart, in a queue that can be reordered by keyboard, at 400×600', async () => {
  const size = 24 * MiB;
  // One path, one query per file, each answered with its own Content-Disposition name.
  const server = await mirror({ size, seed: 51, rate: 1 * MiB, filename: (query) => `report-${query.get('n')}.pdf` });
  const links = Array.from({ length: 12 }, (_, i) => ({ id: `l${i}`, href: `${server.url}?n=${i + 1}`, text: `file ${i + 1}` }));
  // The link page first: cleanup closes the browser, and its kept-alive connections, before the page's server.
  const page = await linkPage(links);
  const p = profile();
  const browser = await browserWith(p);
  await alwaysTakeOver(browser);
  const tab = await browser.context.newPage();
  await tab.goto(page);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });
  // Twelve middle clicks one right after another, each download in a tab of its own (in the page's tab,
  // the next click's navigation would cancel the one not yet known to be a download).
  for (const link of links) await tab.click(`#${link.id}`, { button: 'middle' });
  await until('twelve downloads taken over', async () => (await jobs(popup)).length === 12, 45_000).catch(async (error: unknown) => {
    const reply = (await request(popup, { type: 'list-jobs' })).value!;
    throw new Error(
      `${String(error)}; jobs: ${reply.jobs.map((j) => `${j.filename}: ${j.state}`).join(', ')}; notices: ${reply.notices.map((n) => n.message).join(' | ')}`,
    );
  });
  expect((await jobs(popup)).filter((j) => j.state === 'queued')).toHaveLength(9);
  const rows = popup.getByTestId('job-row');
  await expect.poll(() => rows.count(), { timeout: 5_000 }).toBe(12);

  // Every row says the server's name and the size, the queued ones included.
  const names = await popup.getByTestId('job-filename').allTextContents();
  expect(new Set(names).size).toBe(12);
  for (const name of names) expect(name).toMatch(/^report-\d+\.pdf$/);
  const queued = popup.locator('[data-testid="job-row"][data-state="queued"]');
  for (const text of await queued.getByTestId('job-size').allTextContents()) expect(text).toBe('24 MB');
  for (const text of await queued.getByTestId('job-host').allTextContents()) expect(text).toBe(`127.0.0.1:${server.port}`);
  // Screen readers tell the buttons apart too: no two named alike.
  const pauseNames = await popup.getByTestId('job-pause').evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label')));
  expect(pauseNames).toHaveLength(12);
  expect(new Set(pauseNames).size).toBe(12);
  // No row announces an empty list of notices.
  expect(await popup.getByTestId('job-notices').count()).toBe(0);
  expect(pauseNames[0]).toMatch(/^Pause report-\d+\.pdf \(127\.0\.0\.1:\d+, 24 MB\)$/);

  // The header counts what waits.
  await expect.poll(() => popup.locator('.summary').textContent(), { timeout: 5_000 }).toMatch(/^3 downloading( · .+)? · 9 queued$/);

  // Compact: the add form is out of the way, and most of the twelve rows show at once, two tab stops each.
  expect(await popup.getByTestId('add-url-input').isVisible()).toBe(false);
  const shown = await rows.evaluateAll((lis) => lis.filter((li) => li.getBoundingClientRect().bottom <= window.innerHeight).length);
  expect(shown).toBeGreaterThanOrEqual(9);
  const tabStops = await popup
    .getByTestId('job-list')
    .evaluate(
      (list) =>
        [...list.querySelectorAll<HTMLElement>('button, input, [tabindex]')].filter((el) => el.offsetParent !== null && el.tabIndex >= 0)
          .length,
    );
  expect(tabStops).toBe(24);
  expect(await horizontalOverflow(popup)).toEqual([]);

  // The third in the queue moves up by keyboard: it starts second, and keeps the focus.
  const queueOrder = async () => await queued.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-job-id')));
  const before = await queueOrder();
  const third = popup.locator(`[data-job-id="${before[2]}"]`);
  await third.getByTestId('job-details-toggle').focus();
  await popup.keyboard.press('Enter');
  expect(await third.getByTestId('job-details-toggle').getAttribute('aria-expanded')).toBe('true');
  await third.getByTestId('job-move-up').focus();
  await popup.keyboard.press('Enter');
  await expect.poll(queueOrder, { timeout: 5_000 }).toEqual([before[0], before[2], before[1], ...before.slice(3)]);
  expect(await focusedTestId(popup)).toBe('job-move-up');
  expect(await focusedRowId(popup)).toBe(before[2]);
  const place = (await jobs(popup)).find((j) => j.id === before[2])!.queuePlace;
  expect(place).toEqual({ position: 2, of: 9 });
  await popup.keyboard.press('Enter'); // first now: Move up is gone, and focus stays in the row
  await expect.poll(queueOrder, { timeout: 5_000 }).toEqual([before[2], before[0], before[1], ...before.slice(3)]);
  expect(await focusedRowId(popup)).toBe(before[2]);
  expect(await third.getByTestId('job-move-up').count()).toBe(0);

  for (const scheme of ['light', 'dark'] as const) {
    expect(await seriousViolations(popup, scheme), scheme).toEqual([]);
    expect(await horizontalOverflow(popup), scheme).toEqual([]);
  }
});

test('Add URL… opens the form and Escape closes it; Cancel all has one Undo; focus never falls to the page', async () => {
  const p = profile();
  const running = await mirror({ size: 32 * MiB, seed: 52, filename: 'a.bin', rate: 1 * MiB });
  const small = await mirror({ size: 64 * 1024, seed: 53, filename: 'small.bin' });
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });

  // Alt+Shift+D opens the list (as Ctrl+J opens the browser's): Chrome took the suggested key, no other had it.
  const commands = await popup.evaluate(() =>
    (
      globalThis as unknown as { chrome: { commands: { getAll(): Promise<{ name: string; shortcut: string }[]> } } }
    ).chrome.commands.getAll(),
  );
  expect(commands.find((c) => c.name === '_execute_action')?.shortcut).toBe('Alt+Shift+D');

  // The form: out of the way until asked for, by keyboard too.
  const toggle = popup.getByTestId('add-url-toggle');
  await toggle.focus();
  await popup.keyboard.press('Enter');
  expect(await focusedTestId(popup)).toBe('add-url-input');
  await popup.keyboard.type(small.url);
  await popup.keyboard.press('Enter');
  await expect.poll(() => popup.locator('[data-state="saved"]').count(), { timeout: 20_000 }).toBe(1);
  expect(await focusedTestId(popup)).toBe('add-url-input'); // ready for the next one

  await popup.keyboard.press('Escape');
  expect(await popup.getByTestId('add-url-input').isVisible()).toBe(false);
  expect(await focusedTestId(popup)).toBe('add-url-toggle');
  expect(await toggle.getAttribute('aria-expanded')).toBe('false');

  // Clear finished: the button stays focused (unusable now) instead of dropping focus to the page.
  await popup.getByTestId('clear-finished').focus();
  await popup.keyboard.press('Enter');
  await expect.poll(() => popup.getByTestId('job-row').count(), { timeout: 10_000 }).toBe(0);
  expect(await focusedTestId(popup)).toBe('clear-finished');
  expect(await popup.getByTestId('clear-finished').getAttribute('aria-disabled')).toBe('true');

  // Cancel all: every unfinished row becomes one line, and one Undo above the list brings them all back;
  // when that Undo expires, focus goes back to Cancel all.
  const { job } = (await request(popup, { type: 'add-url', url: running.url })).value!;
  const row = popup.locator(`[data-job-id="${job.id}"]`);
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('running');
  await popup.getByTestId('cancel-all').click();
  await expect.poll(() => row.getByTestId('job-state').textContent(), { timeout: 10_000 }).toBe('Cancelled');
  expect(await row.getByTestId('job-undo').count()).toBe(0);
  expect(await popup.getByTestId('undo-all-bar').textContent()).toBe('Cancelled 1 download. Undo');
  await popup.getByTestId('undo-all').focus();
  await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(0);
  expect(await popup.getByTestId('undo-all').count()).toBe(0);
  expect(await focusedTestId(popup)).toBe('cancel-all');
});
