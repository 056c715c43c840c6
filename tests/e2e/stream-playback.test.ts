/**
 * Streams Stitch plays from their stored file while it downloads them (fMP4 through hls.js, DASH's
 * two tracks joined), and saves exact. Nothing here is timed against a reference: the seek that is
 * lives in stream-player.test.ts, which runs alone.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { startStreamServer } from '../support/stream-server';
import { DASH, dashTrackBytes, expectedBytes, FMP4, packets, stream, type MadeStream } from '../support/streams';
import { fileSha256, waitForFile } from './support/files';
import { openStitchPlayer, type PlayBrowser } from './support/play-case';
import { firstFrameMs, playedTo } from './support/player';
import { onCleanup } from './support/setup';

/** Stitch's player on the stream's playlist (or manifest) at `path`, from a fresh server: once it played 2 s. */
async function playStored(browser: PlayBrowser, made: MadeStream, path: string) {
  const server = await startStreamServer({ root: made.dir });
  onCleanup(() => server.close());
  const played = await openStitchPlayer(browser, `${server.origin}/${path}`, onCleanup);
  await firstFrameMs(played.page, 30_000);
  await playedTo(played.page, 2, 20_000);
  return played;
}

test.each<PlayBrowser>(['chromium', 'firefox'])(
  '%s: an fMP4 stream (an initialization section, then fragments) plays from its stored file and is saved exact',
  async (browser) => {
    const fmp4 = await stream(FMP4);
    const { downloads } = await playStored(browser, fmp4, 'v0/index.m3u8');
    const wanted = expectedBytes(fmp4, 0);
    const saved = await waitForFile(downloads, 'index.mp4', wanted.length, 60_000);
    expect(await fileSha256(saved)).toBe(createHash('sha256').update(wanted).digest('hex'));
  },
);

test.each<PlayBrowser>(['chromium', 'firefox'])(
  '%s: a DASH stream (picture and sound apart) plays from its stored file with sound, and is saved as one MP4 with both',
  async (browser) => {
    const dash = await stream(DASH);
    const { page, downloads } = await playStored(browser, dash, 'manifest.mpd');
    // hls.js made one source buffer of both tracks: the page plays the sound too.
    const tracks = await (page as { evaluate(source: string): Promise<unknown> }).evaluate(
      `(() => { const v = document.querySelector('video'); return { width: v.videoWidth, audio: (v.mozHasAudio ?? v.webkitAudioDecodedByteCount > 0) === true }; })()`,
    );
    expect(tracks).toEqual({ width: 640, audio: true });
    const saved = await waitForFile(downloads, 'manifest.mp4', undefined, 60_000);
    const own = join(tmpdir(), `stitch-dash-${browser}-${Date.now()}`);
    mkdirSync(own);
    onCleanup(() => rmSync(own, { recursive: true, force: true }));
    writeFileSync(join(own, 'picture.mp4'), dashTrackBytes(dash, 1));
    writeFileSync(join(own, 'sound.mp4'), dashTrackBytes(dash, 2));
    expect(packets(saved, '0:v')).toEqual(packets(join(own, 'picture.mp4'), '0:v'));
    expect(packets(saved, '0:a')).toEqual(packets(join(own, 'sound.mp4'), '0:a'));
  },
);
