/**
 * Issue 30: a video stream plays while Stitch downloads it, in Stitch's player (hls.js reading the
 * stored file), and a seek far ahead plays about as soon as hls.js playing the same stream straight
 * from the same server: within 1 s of it, in both browsers. The saved file is exact all the same.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { beforeAll, expect, test } from 'vitest';
import { startStreamServer, type StreamServer } from '../support/stream-server';
import { expectedBytes, SEEK_2_MINUTES, stream, type MadeStream } from '../support/streams';
import { fileSha256, waitForFile } from './support/files';
import { openInFreshBrowser, openStitchPlayer, type PlayBrowser } from './support/play-case';
import { firstFrameMs, playedTo, seekAndTime, type AnyPage } from './support/player';
import { onCleanup } from './support/setup';

let made: MadeStream;
let expected: Buffer;
/** The stream's mean bitrate, in bytes/s. */
let bitrate: number;
beforeAll(async () => {
  made = await stream(SEEK_2_MINUTES);
  expected = expectedBytes(made, 0);
  bitrate = expected.length / made.durationSeconds;
}, 180_000);

const HLS_JS = readFileSync(createRequire(import.meta.url).resolve('hls.js/dist/hls.light.min.js'));

/**
 * hls.js as a site runs it (its defaults), on the stream's master playlist, started by `start()`
 * once the page (and hls.js) loaded at full speed; it marks its first frame as Stitch's player does.
 */
const HLS_PAGE = `<!doctype html><video controls preload="auto"></video><script src="hls.js"></script><script>
  const video = document.querySelector('video');
  const mark = () => performance.getEntriesByName('stitch:first-frame').length === 0 && performance.mark('stitch:first-frame');
  video.requestVideoFrameCallback(mark);
  window.start = () => {
    const hls = new Hls();
    hls.loadSource('master.m3u8');
    hls.attachMedia(video);
    video.play().catch(() => {});
  };
</script>`;

/** A fresh stream server (new port: no cache applies) of the stream, with the reference page. */
async function streamServer(): Promise<StreamServer> {
  const server = await startStreamServer({ root: made.dir, files: { '/hls.html': HLS_PAGE, '/hls.js': HLS_JS } });
  onCleanup(() => server.close());
  return server;
}

/** Plays 2 s from the start, then seeks to 80 % (after `beforeSeek`): the ms until it plays there. */
async function seekWhilePlaying(page: AnyPage, beforeSeek = () => {}): Promise<{ firstFrame: number; seek: number }> {
  const firstFrame = await firstFrameMs(page, 30_000);
  await playedTo(page, 2, 20_000);
  beforeSeek();
  const { ms } = await seekAndTime(page, 0.8, 20_000);
  return { firstFrame, seek: ms };
}

/** The segment a seek to 80 % lands in (2 s segments). */
const TARGET_SEGMENT = '/v0/seg48.ts';
/** Requests for the target segment's bytes (not the plan's one-byte probe of its size). */
const targetReads = (server: StreamServer) => server.requests.filter((r) => r.path === TARGET_SEGMENT && r.range !== 'bytes=0-0');

const SPEED = 2;

async function compare(browser: PlayBrowser): Promise<void> {
  const rate = Math.round(bitrate * SPEED);

  const direct = await streamServer();
  const reference = await openInFreshBrowser(browser, `${direct.origin}/hls.html`, onCleanup);
  direct.setRate(rate);
  await (reference as { evaluate(source: string): Promise<unknown> }).evaluate('start()');
  const own = await seekWhilePlaying(reference);

  const server = await streamServer();
  server.setRate(rate);
  const { page, downloads } = await openStitchPlayer(browser, `${server.origin}/master.m3u8`, onCleanup);
  // The seek lands far ahead of the download: its segment was never asked for before it.
  const stitch = await seekWhilePlaying(page, () => expect(targetReads(server)).toEqual([]));
  const route = await (page as { evaluate(source: string): Promise<unknown> }).evaluate(
    `document.querySelector('[data-testid="player-route"]').dataset.route`,
  );
  console.log(
    `${browser}, ${made.durationSeconds} s HLS stream (${expected.length} B) at ${SPEED}× its bitrate: ` +
      `first frame ${stitch.firstFrame.toFixed(0)} ms (hls.js from the server: ${own.firstFrame.toFixed(0)} ms); ` +
      `a seek to 80 % plays after ${stitch.seek.toFixed(0)} ms (hls.js from the server: ${own.seek.toFixed(0)} ms)`,
  );
  expect(route).toBe('hls');
  expect(targetReads(server)).not.toEqual([]);
  expect(stitch.seek).toBeLessThanOrEqual(own.seek + 1000);

  // The timed part is over: the rest of the download at full speed, and the file saved exact.
  server.setRate(undefined);
  const saved = await waitForFile(downloads, 'master.ts', expected.length, 60_000);
  expect(await fileSha256(saved)).toBe(createHash('sha256').update(expected).digest('hex'));
}

test('Chromium: a stream plays while it downloads, and a seek to 80 % plays within 1 s of hls.js straight from the server', () =>
  compare('chromium'));

test('Firefox: a stream plays while it downloads, and a seek to 80 % plays within 1 s of hls.js straight from the server', () =>
  compare('firefox'));
