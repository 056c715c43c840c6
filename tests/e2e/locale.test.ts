import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { horizontalOverflow, seriousViolations } from './support/axe';
import { extensionPage } from './support/chromium';
import { browserWith, MiB, mirror, profile } from './support/setup';

test('in a German browser the popup and the options page speak German and write numbers the German way', async () => {
  const size = 24 * MiB;
  // Slow enough that the row is seen while it downloads.
  const server = await mirror({ size, seed: 41, filename: 'deutsch.iso', rate: 2 * MiB });
  const browser = await browserWith(profile(), 'de');

  const popup = await extensionPage(browser, 'popup.html');
  expect(
    await popup.evaluate(() => (globalThis as unknown as { chrome: { i18n: { getUILanguage(): string } } }).chrome.i18n.getUILanguage()),
  ).toMatch(/^de/);
  expect(await popup.evaluate(() => document.documentElement.lang)).toBe('de');
  expect(await popup.getByTestId('add-url-submit').textContent()).toBe('Herunterladen');
  await popup.getByTestId('add-url-input').fill(server.url);
  await popup.getByTestId('add-url-submit').click();
  const row = popup.getByTestId('job-row');
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('running');
  await expect.poll(() => row.getByTestId('job-state').textContent(), { timeout: 10_000 }).toBe('Lädt');
  // "3,5 MB von 24 MB (14 %)": decimal comma, binary MB as in the browser's own list, a space before %.
  await expect
    .poll(() => row.getByTestId('job-size').textContent(), { timeout: 20_000 })
    .toMatch(/^\d+(,\d)? (KB|MB) von 24 MB \(\d+\s%\)$/);
  expect(await row.getByTestId('job-pause').textContent()).toBe('Anhalten');
  // German words are longer: the popup at its real width must still fit them, and stay accessible.
  await popup.setViewportSize({ width: 400, height: 600 });
  expect(await horizontalOverflow(popup)).toEqual([]);
  expect(await seriousViolations(popup, 'light')).toEqual([]);
  await popup.screenshot({ path: resolve(tmpdir(), 'stitch-popup-de.png') });

  const options = await extensionPage(browser, 'options.html');
  expect(await options.title()).toBe('Stitch-Einstellungen');
  expect(await options.locator('h1').textContent()).toBe('Stitch-Einstellungen');
  expect(await options.locator('body').textContent()).toContain('1 MB = 1.048.576 Byte');
  await options.getByTestId('setting-threshold-mb').fill('-5');
  await options.getByTestId('settings-save').click();
  await expect
    .poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 })
    .toBe('Nicht gespeichert: Beheben Sie die oben aufgeführten Probleme.');
  expect(await options.getByTestId('settings-errors').textContent()).toContain(
    'Größenschwelle: Geben Sie eine Zahl in MB von 0 bis 953.674.316 ein.',
  );
});
