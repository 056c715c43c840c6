/**
 * Settings files in Chromium, through the real background: a hostile file that re-points aria2 to a
 * plain-http address and sends every download there is shown change by change and stored only with
 * the user's own yes, without the token Stitch had; a huge file is refused with nothing stored; the
 * export holds no token.
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import type { Settings } from '../../src/settings/schema';
import { extensionPage, request } from './support/chromium';
import { waitForFile } from './support/files';
import { browserWith, profile } from './support/setup';

const settingsOf = async (page: Page): Promise<Settings> => (await request(page, { type: 'get-settings' })).value!.settings;

async function choose(options: Page, name: string, text: string): Promise<void> {
  await options.getByTestId('settings-import').setInputFiles({ name, mimeType: 'application/json', buffer: Buffer.from(text) });
}

test('an imported file that re-points aria2 is shown and asked; the token stays; the export has none', async () => {
  const own = profile();
  const browser = await browserWith(own);
  const options = await extensionPage(browser, 'options.html');
  await expect.poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 }).toBe('');
  const mine = { ...(await settingsOf(options)), aria2Url: 'http://127.0.0.1:6800/jsonrpc', aria2Secret: 'my-token' };
  expect((await request(options, { type: 'set-settings', settings: mine })).ok).toBe(true);
  await options.reload();

  // Over 1 MiB: refused before it is read, nothing stored.
  await choose(options, 'big.json', `{"excludedSites":["${'a'.repeat(2 * 1024 * 1024)}"]}`);
  await expect
    .poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 })
    .toBe('Nothing imported: big.json has problems, listed at the top.');
  expect(await options.getByTestId('settings-errors').textContent()).toContain('The file is over 1 MB');

  const hostile = { aria2Url: 'http://nas.example:6800/jsonrpc', aria2PlainConfirmed: true, aria2MinBytes: 0 };
  await choose(options, 'hostile.json', JSON.stringify(hostile));
  const question = options.getByTestId('import-confirm');
  await expect
    .poll(() => question.locator('li').allTextContents(), { timeout: 10_000 })
    .toEqual([
      'aria2 address: from http://127.0.0.1:6800/jsonrpc to http://nas.example:6800/jsonrpc.',
      'Send downloads of at least: from none to 0 MB.',
      "aria2's secret token: cleared, so that the token you have does not go to another address. Enter the new address's token after the import.",
    ]);
  expect(await options.getByTestId('import-confirm-apply').isDisabled()).toBe(true);
  expect(await settingsOf(options)).toMatchObject({ aria2Url: mine.aria2Url, aria2Secret: 'my-token', aria2MinBytes: null });

  await options.getByTestId('import-confirm-plain').check();
  await options.getByTestId('import-confirm-apply').click();
  await expect
    .poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 })
    .toBe('Imported hostile.json and saved it.');
  expect(await settingsOf(options)).toMatchObject({ ...hostile, aria2Secret: '' });

  expect(
    (await request(options, { type: 'set-settings', settings: { ...(await settingsOf(options)), aria2Secret: 'new-token' } })).ok,
  ).toBe(true);
  await options.getByTestId('settings-export').click();
  const file = await waitForFile(own.downloads, `stitch-settings-${new Date().toISOString().slice(0, 10)}.json`, undefined, 10_000);
  const exported = await readFile(file, 'utf8');
  expect(JSON.parse(exported)).toMatchObject({ aria2Url: hostile.aria2Url, aria2MinBytes: 0 });
  expect(exported).not.toContain('new-token');
  expect(exported).not.toContain('aria2PlainConfirmed');
});
