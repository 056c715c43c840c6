import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { extensionPage } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { browserWith, linkPage, MiB, mirror, profile } from './support/setup';

const DOCS = resolve(import.meta.dirname, '../../docs');

test('the popup shows progress and completion, and pauses and resumes a download', async () => {
  const size = 24 * MiB;
  const seed = 21;
  const server = await mirror({ size, seed, filename: 'popup-test.iso', rate: 2 * MiB });
  const page = await linkPage([{ id: 'f', href: server.url, text: 'file' }]);
  const p = profile();
  const browser = await browserWith(p);
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
  await popup.screenshot({ path: resolve(DOCS, 'popup.png') });

  await row.getByTestId('job-pause').click();
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 10_000 }).toBe('paused');
  const sentWhenPaused = server.stats.bytesSent;
  await new Promise((r) => setTimeout(r, 1500));
  expect(server.stats.bytesSent - sentWhenPaused).toBeLessThan(1 * MiB); // nothing more is fetched
  const pausedAt = await progress();

  await row.getByTestId('job-resume').click();
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
  await options.screenshot({ path: resolve(DOCS, 'options.png') });

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
