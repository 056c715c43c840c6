import { expect, test } from 'vitest';
import { seriousViolations } from './support/axe';
import { extensionPage, streamRouteReady } from './support/chromium';
import { firstFrameMs, videoFixture } from './support/player';
import { browserWith, mirror, profile } from './support/setup';

/**
 * The player's own controls in Chromium: its message follows what the video does, and the bar
 * of stored bytes is a position slider, by pointer and by keyboard.
 */
test('Chromium player: a wait ends when the video plays, and the stored bar seeks by click and by keyboard', async () => {
  const video = videoFixture();
  const size = video.bytes.length;
  const server = await mirror({ size, body: video.bytes, contentType: 'video/webm', filename: 'controls.webm' });
  const browser = await browserWith(profile());
  await streamRouteReady(browser);
  const player = await extensionPage(browser, `player.html?url=${encodeURIComponent(server.url)}`);
  await player.setViewportSize({ width: 800, height: 600 });
  await firstFrameMs(player, 30_000);
  const media = player.getByTestId('player-media');
  const message = player.getByTestId('player-message');
  const currentTime = () => media.evaluate((v: HTMLVideoElement) => v.currentTime);
  const duration = await media.evaluate((v: HTMLVideoElement) => v.duration);
  expect(duration).toBeGreaterThan(30);

  // A 'waiting' the element never follows with 'playing' (Chromium does so): the time moves on, and the message goes.
  // Read in the same task as the event: the next 'timeupdate' (every 250 ms while it plays) may end the wait.
  const said = await media.evaluate((v: HTMLVideoElement) => {
    v.dispatchEvent(new Event('waiting'));
    return document.querySelector('[data-testid="player-message"]')?.textContent;
  });
  expect(said).toBe('Waiting for the download…');
  const waitedAt = await currentTime();
  await expect.poll(() => message.isVisible(), { timeout: 3_000 }).toBe(false);
  expect(await currentTime()).toBeGreaterThan(waitedAt);

  // A click at three quarters of the bar plays from three quarters of the media.
  const bar = player.getByTestId('player-stored');
  const box = (await bar.boundingBox())!;
  await player.mouse.click(box.x + box.width * 0.75, box.y + box.height / 2);
  await expect.poll(currentTime, { timeout: 10_000 }).toBeGreaterThan(duration * 0.75 - 1);
  expect(await currentTime()).toBeLessThan(duration * 0.75 + 3);

  // By keyboard: Home to the start, then → twice, 5 s each; the slider says where it is.
  await bar.focus();
  await player.keyboard.press('Home');
  await expect.poll(currentTime, { timeout: 10_000 }).toBeLessThan(2);
  await player.keyboard.press('ArrowRight');
  await player.keyboard.press('ArrowRight');
  await expect.poll(currentTime, { timeout: 10_000 }).toBeGreaterThanOrEqual(9);
  expect(await currentTime()).toBeLessThan(14);
  expect(await bar.getAttribute('role')).toBe('slider');
  expect(Number(await bar.getAttribute('aria-valuenow'))).toBeGreaterThanOrEqual(9);
  expect(await bar.getAttribute('aria-valuetext')).toMatch(/^0:\d\d of 0:\d\d · Stored: /);

  for (const scheme of ['light', 'dark'] as const) expect(await seriousViolations(player, scheme), scheme).toEqual([]);
});
