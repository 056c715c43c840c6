/**
 * What a person sees of a download's numbers when its server goes silent (issue 50, item 1), and of a
 * speed limit typed wrong (item 2), in the popup of real Chromium.
 */
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { TokenBucket } from '../support/token-bucket';
import { extensionPage, request } from './support/chromium';
import { fileSha256, waitForFile } from './support/files';
import { browserWith, changeSettings, MiB, mirror, profile } from './support/setup';

/**
 * The client's link to a server that, once `after` bytes went out, sends nothing on any connection
 * for `silentMs` (connections stay open), then goes on at `rate` as before.
 */
class SilenceOnce extends TokenBucket {
  /** When the silence began and ended (Date.now), once it has. */
  silentFrom?: number;
  silentUntil = 0;
  private reserved = 0;

  constructor(
    rate: number,
    private readonly after: number,
    private readonly silentMs: number,
  ) {
    super(rate);
  }

  override reserve(bytes: number): number {
    const now = Date.now();
    this.reserved += bytes;
    if (this.silentFrom === undefined && this.reserved >= this.after) {
      this.silentFrom = now;
      this.silentUntil = now + this.silentMs;
    }
    const wait = super.reserve(bytes);
    return now < this.silentUntil ? Math.max(wait, this.silentUntil - now) : wait;
  }
}

test('a server silent for 15 s mid-file: the row and the header say stalled with 0 B/s, then the numbers come back', async () => {
  const size = 24 * MiB;
  const seed = 61;
  const link = new SilenceOnce(2 * MiB, 8 * MiB, 15_000);
  const p = profile();
  const server = await mirror({ size, seed, filename: 'stalled.bin', link });
  const browser = await browserWith(p);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });
  const added = (await request(popup, { type: 'add-url', url: server.url })).value!.job;
  const row = popup.locator(`[data-job-id="${added.id}"]`);
  const state = row.getByTestId('job-state');
  const rate = row.getByTestId('job-rate');
  const eta = row.getByTestId('job-eta');
  const summary = popup.getByTestId('summary');

  // Before the silence: downloading, at a speed, with a time left.
  await expect.poll(() => eta.textContent(), { timeout: 15_000 }).toMatch(/left/);
  expect(await state.textContent()).toBe('Downloading');
  expect(await rate.textContent()).toMatch(/^[\d.]+ (KB|MB)\/s$/);

  // Within 5 s of the silence: stalled, 0 B/s, no time left, on the row and in the header.
  await expect.poll(() => link.silentFrom, { timeout: 15_000 }).toBeDefined();
  await expect.poll(() => state.textContent(), { timeout: 6_000, interval: 100 }).toBe('Stalled, reconnecting…');
  const seenAfterMs = Date.now() - link.silentFrom!;
  expect(seenAfterMs).toBeLessThan(5_000);
  expect(await rate.textContent()).toBe('0 B/s');
  expect(await eta.textContent()).toBe('');
  expect(await summary.textContent()).toBe('Stalled, reconnecting…');
  // It stays so while nothing comes, never showing the numbers from before the silence.
  for (let i = 0; i < 8; i++) {
    await new Promise((r) => setTimeout(r, 1_000));
    if (Date.now() > link.silentUntil - 500) break;
    expect(await state.textContent()).toBe('Stalled, reconnecting…');
    expect(await rate.textContent()).toBe('0 B/s');
    expect(await eta.textContent()).toBe('');
  }

  // The bytes come again: so do the numbers, in the row and the header.
  await expect.poll(() => state.textContent(), { timeout: 15_000 }).toBe('Downloading');
  expect(Date.now()).toBeGreaterThanOrEqual(link.silentUntil);
  await expect.poll(() => rate.textContent(), { timeout: 3_000 }).toMatch(/^[\d.]+ MB\/s$/);
  await expect.poll(() => eta.textContent(), { timeout: 3_000 }).toMatch(/^\d+ sec left$/);
  await expect.poll(() => summary.textContent(), { timeout: 3_000 }).toMatch(/^1 downloading · [\d.]+ MB\/s$/);

  const saved = await waitForFile(p.downloads, 'stalled.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
});

test('a speed limit typed wrong is refused in words and the old limit stays; an empty field removes it', async () => {
  const p = profile();
  const server = await mirror({ size: 64 * MiB, seed: 62, filename: 'limited.bin', rate: 1 * MiB });
  const browser = await browserWith(p);
  // The settings' limit for all shows in the header.
  await changeSettings(browser, { speedLimitBytesPerSec: 8 * MiB });
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });
  const added = (await request(popup, { type: 'add-url', url: server.url })).value!.job;
  const row = popup.locator(`[data-job-id="${added.id}"]`);
  const field = row.getByTestId('job-speed-limit');
  const error = row.getByTestId('job-speed-limit-error');
  const limit = row.getByTestId('job-limit');
  const stored = async () => (await request(popup, { type: 'list-jobs' })).value!.jobs.find((j) => j.id === added.id)?.speedLimit;
  await expect.poll(() => popup.getByTestId('summary').textContent(), { timeout: 10_000 }).toMatch(/limited to 8 MB\/s$/);

  await row.getByTestId('job-details-toggle').click();
  await field.fill('100');
  await field.press('Enter');
  await expect.poll(stored, { timeout: 5_000 }).toBe(100 * 1024);
  await expect.poll(() => limit.textContent(), { timeout: 5_000 }).toBe('limit 100 KB/s');

  for (const typed of ['-5', '0', 'abc']) {
    await field.fill(typed);
    await field.press('Enter');
    await expect(error.isVisible()).resolves.toBe(true);
    expect(await error.textContent()).toBe(
      'Leave the speed limit empty (no limit) or enter a number of KB/s from 1 to 976,562,500. The limit stays at 100 KB/s.',
    );
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    // A second later, progress has come and gone: the old limit holds, the row still shows it, the field what was typed.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await stored()).toBe(100 * 1024);
    expect(await limit.textContent()).toBe('limit 100 KB/s');
    expect(await field.inputValue()).toBe(typed);
  }
  // Collapsed, the row still says the limit is on.
  await row.getByTestId('job-details-toggle').click();
  expect(await limit.isVisible()).toBe(true);
  await row.getByTestId('job-details-toggle').click();

  await field.fill('');
  await field.press('Enter');
  await expect.poll(stored, { timeout: 5_000 }).toBeUndefined();
  await expect.poll(() => limit.isVisible(), { timeout: 5_000 }).toBe(false);
  expect(await error.isVisible()).toBe(false);
  expect(await field.getAttribute('aria-invalid')).toBeNull();
});
