import { expect, test } from 'vitest';
import { extensionPage, request, streamRouteReady } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { firstFrameMs, seekAndTime, videoFixture } from './support/player';
import { browserWith, mirror, profile } from './support/setup';

/**
 * Play while downloading, in Chromium: a real 40 s WebM served at 1.3× its mean bitrate.
 * The player page (?url=) starts the job; the service worker answers the element's range
 * requests from IndexedDB; the engine fetches what the player needs first. Default settings.
 */
test('Chromium: a video plays long before its download completes, seeks ahead, and the saved file is exact', async () => {
  const video = videoFixture();
  const size = video.bytes.length;
  const bitrate = size / video.durationSeconds;
  const server = await mirror({
    size,
    body: video.bytes,
    contentType: 'video/webm',
    filename: 'progressive.webm',
    rate: Math.round(bitrate * 1.3),
  });
  const p = profile();
  const browser = await browserWith(p);
  const downloaded = () => server.stats.bytesSent / size;
  // The player's first page reloads itself when the worker does not control it yet, which would
  // reset its clock: wait for the worker first, as a person opening the player later would.
  await streamRouteReady(browser);
  const player = await extensionPage(browser, `player.html?url=${encodeURIComponent(server.url)}`);
  const firstFrame = await firstFrameMs(player, 30_000);
  const atFirstFrame = downloaded();
  expect(await player.getByTestId('player-route').getAttribute('data-route')).toBe('stream');
  // Playback started long before the download completed.
  expect(atFirstFrame).toBeLessThan(0.4);

  // The seek: to 80 % of the media while the download is at about 20 %.
  await until('20 % downloaded', () => downloaded() >= 0.2, 30_000, 50);
  const atSeek = downloaded();
  const seek = await seekAndTime(player, 0.8, 15_000);
  expect(atSeek).toBeLessThan(0.35);
  expect(seek.ms).toBeLessThan(6000);

  // The timed part is over: uncapped, the download ends in a second, not in the ~25 s left at 1.3× the bitrate.
  server.setRate(undefined);
  // The download completes with the exact file, whatever the player asked for meanwhile.
  const saved = await waitForFile(p.downloads, 'progressive.webm', size, 60_000);
  expect(await fileSha256(saved)).toBe(video.sha256);
  const jobId = new URL(player.url()).searchParams.get('id')!;

  // The same file, fully downloaded (the first player keeps its stored copy): the reference,
  // opened from the popup's Play button.
  const popup = await extensionPage(browser, 'popup.html');
  const row = popup.locator(`[data-testid="job-row"][data-job-id="${jobId}"]`);
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('saved');
  const opened = browser.context.waitForEvent('page');
  await row.getByTestId('job-details-toggle').click();
  await row.getByTestId('job-play').click();
  const again = await opened;
  await again.waitForURL(/player\.html\?id=/);
  expect(new URL(again.url()).searchParams.get('id')).toBe(jobId);
  const firstFrameComplete = await firstFrameMs(again, 20_000);
  const seekComplete = await seekAndTime(again, 0.8, 15_000);

  console.log(
    [
      'Play while downloading (Chromium, service-worker route, 40 s WebM at 1.3× its bitrate):',
      `  time to first frame: ${Math.round(firstFrame)} ms while downloading (at ${Math.round(atFirstFrame * 100)} % downloaded), ${Math.round(firstFrameComplete)} ms from the complete file`,
      `  seek to 80 %, time until playing: ${Math.round(seek.ms)} ms while downloading (at ${Math.round(atSeek * 100)} % downloaded), ${Math.round(seekComplete.ms)} ms from the complete file`,
    ].join('\n'),
  );

  // Once no player holds them, the saved job's stored bytes are freed: no more Play.
  await again.close();
  await player.close();
  await expect.poll(async () => (await request(popup, { type: 'list-jobs' })).value?.jobs[0]?.canPlay, { timeout: 10_000 }).toBeUndefined();
  await expect.poll(() => row.getByTestId('job-play').count(), { timeout: 5_000 }).toBe(0);
});
