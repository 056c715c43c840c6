import { expect, test } from 'vitest';
import { extensionPage, request } from './support/chromium';
import { browserWith, MiB, mirror, profile } from './support/setup';

test('a queued download has Start now, and one a player waits for starts at once, past the limit of concurrent downloads', async () => {
  const ahead = await mirror({ size: 64 * MiB, seed: 45, filename: 'ahead.bin', rate: MiB });
  const waiting = await mirror({ size: 8 * MiB, seed: 46, filename: 'waiting.bin', rate: MiB });
  const clip = await mirror({ size: 8 * MiB, seed: 47, filename: 'clip.webm', contentType: 'video/webm', rate: MiB });
  const browser = await browserWith(profile());
  const popup = await extensionPage(browser, 'popup.html');
  const { settings } = (await request(popup, { type: 'get-settings' })).value!;
  expect((await request(popup, { type: 'set-settings', settings: { ...settings, maxConcurrentJobs: 1 } })).ok).toBe(true);
  const add = async (url: string) => (await request(popup, { type: 'add-url', url })).value!.job;
  const first = await add(ahead.url);
  const second = await add(waiting.url);
  const rowOf = (id: string) => popup.locator(`[data-job-id="${id}"]`);
  await expect.poll(() => rowOf(first.id).getAttribute('data-state'), { timeout: 20_000 }).toBe('running');

  // The queued row says so and offers to start it now; the running one does not.
  await expect.poll(() => rowOf(second.id).getAttribute('data-state'), { timeout: 10_000 }).toBe('queued');
  const startNow = rowOf(second.id).getByTestId('job-start-now');
  expect(await startNow.textContent()).toBe('Start now');
  expect(await rowOf(first.id).getByTestId('job-start-now').count()).toBe(0);
  await startNow.click();
  await expect.poll(() => rowOf(second.id).getAttribute('data-state'), { timeout: 10_000 }).toBe('running');
  expect(await rowOf(first.id).getAttribute('data-state')).toBe('running');
  expect(waiting.stats.requests.length).toBeGreaterThan(0);

  // Play on a queued download: the player does not wait behind the two downloads ahead of it.
  const third = await add(clip.url);
  await expect.poll(() => rowOf(third.id).getAttribute('data-state'), { timeout: 10_000 }).toBe('queued');
  const player = await extensionPage(browser, `player.html?id=${third.id}`);
  await expect.poll(() => rowOf(third.id).getAttribute('data-state'), { timeout: 10_000 }).toBe('running');
  await expect.poll(() => clip.stats.requests.length, { timeout: 10_000 }).toBeGreaterThan(0);
  await expect
    .poll(() => player.getByTestId('player-message').textContent(), { timeout: 10_000 })
    .not.toBe('Waiting for the server’s answer…');
});
