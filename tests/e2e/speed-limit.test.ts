/**
 * A download's own speed limit, set from its row in the popup, holds on the wire. It counts bytes per
 * second, so this file runs alone (vitest.e2e.config.ts): beside another browser, 2 MiB went through
 * in 3 s at a 256 KB/s limit.
 */
import { expect, test } from 'vitest';
import { extensionPage, request } from './support/chromium';
import { browserWith, MiB, mirror, profile } from './support/setup';

test('a download’s own speed limit holds it below the limit for all, set from its row', async () => {
  const p = profile();
  const server = await mirror({ size: 64 * MiB, seed: 54, filename: 'limited.bin', rate: 4 * MiB });
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });
  const added = (await request(popup, { type: 'add-url', url: server.url })).value!.job;
  const row = popup.locator(`[data-job-id="${added.id}"]`);
  await row.getByTestId('job-details-toggle').click();
  await row.getByTestId('job-speed-limit').fill('256');
  await row.getByTestId('job-speed-limit').press('Enter');
  await expect
    .poll(async () => (await request(popup, { type: 'list-jobs' })).value!.jobs.find((j) => j.id === added.id)?.speedLimit, {
      timeout: 5_000,
    })
    .toBe(256 * 1024);
  // Measured once the limit holds: at most the limit and its quarter second of burst.
  await new Promise((r) => setTimeout(r, 1000));
  const sent = server.stats.bytesSent;
  await new Promise((r) => setTimeout(r, 3000));
  // 3 s at 256 KB/s, with room for the bytes in flight: far below the server's 4 MB/s.
  expect(server.stats.bytesSent - sent).toBeLessThan(1.5 * MiB);
  expect(await row.getByTestId('job-speed-limit').inputValue()).toBe('256');
});
