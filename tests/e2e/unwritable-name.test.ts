/**
 * Issue 50, item 10: a name the file system refuses. Chromium started in a locale the system lacks
 * (`LANG=en.UTF-8`) cannot write a file name outside ASCII; the browser alone then saves as
 * "download". A complete download is never failed on its name: Stitch saves it under a safe name
 * and says so.
 */
import { readdirSync } from 'node:fs';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { extensionPage, launchWithExtension, request } from './support/chromium';
import { fileSha256, until } from './support/files';
import { alwaysTakeOver, linkPage, MiB, mirror, onCleanup, profile } from './support/setup';

test('Chromium in a locale the system lacks: a name outside ASCII is saved under a safe name, exact, and the row says so', async () => {
  const size = 24 * MiB;
  const seed = 71;
  const server = await mirror({ size, seed, filename: 'Überraschung – café.bin' });
  const page = await linkPage([{ id: 'file', href: server.url, text: 'file' }]);
  const p = profile();
  const browser = await launchWithExtension(p, undefined, [], { LANG: 'en.UTF-8', LC_ALL: 'en.UTF-8' });
  onCleanup(() => browser.close());
  await alwaysTakeOver(browser);
  const tab = await browser.context.newPage();
  await tab.goto(page);
  await tab.click('#file');

  const ui = await extensionPage(browser, 'offscreen/offscreen.html');
  const job = await until(
    'the download to be saved or fail',
    async () => {
      const reply = await request(ui, { type: 'list-jobs' });
      const found = reply.value?.jobs[0];
      return found && (found.state === 'saved' || found.state === 'failed') ? found : undefined;
    },
    60_000,
  );
  expect(job).toMatchObject({ state: 'saved', filename: 'Uberraschung _ cafe.bin', renamedFrom: 'Überraschung – café.bin' });
  expect(readdirSync(p.downloads)).toEqual(['Uberraschung _ cafe.bin']);
  expect(await fileSha256(`${p.downloads}/Uberraschung _ cafe.bin`)).toBe(await contentSha256(seed, size));

  // What a person sees: the row's details say under which name it went, and why.
  const popup = await extensionPage(browser, 'popup.html');
  await popup.getByTestId('job-details-toggle').click();
  await expect
    .poll(() => popup.getByTestId('job-notices').textContent())
    .toBe('Saved as “Uberraschung _ cafe.bin”: this system cannot write the name “Überraschung – café.bin”.');
});
