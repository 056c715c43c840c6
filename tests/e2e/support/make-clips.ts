/**
 * Vitest global setup of the end-to-end files that run alone (vitest.e2e.config.ts): makes the clips
 * and the stream the seek tests play (tests/support/clips.ts) at the start of the run, one at a time at a low CPU
 * priority, while the files that run two at a time wait on their servers. On a fresh checkout that is
 * about 75 s of ffmpeg on two cores that the seek tests would otherwise wait for. A test that asks
 * for a clip still being made waits for it (clips.ts takes a lock per clip); ffmpeg errors are left
 * to that test to report. At the end of the run, a clip not made yet is given up.
 */
import { clip, MP3, MP4_FASTSTART, SMALL_WEBM, WEBM_16MB, WEBM_2MB } from '../../support/clips';
import { SEEK_2_MINUTES, stream } from '../../support/streams';

/** What player-seek.test.ts, player-users-files.test.ts and player-firefox.test.ts play, then stream-player.test.ts's stream. */
const E2E_CLIPS = [SMALL_WEBM, WEBM_2MB, WEBM_16MB, MP3, MP4_FASTSTART];

export default function setup(): () => Promise<void> {
  const stop = new AbortController();
  const made = (async () => {
    for (const recipe of E2E_CLIPS) {
      if (stop.signal.aborted) return;
      await clip(recipe, { background: true, signal: stop.signal }).catch(() => {});
    }
    if (!stop.signal.aborted) await stream(SEEK_2_MINUTES, { background: true, signal: stop.signal }).catch(() => {});
  })();
  return async () => {
    stop.abort();
    await made;
  };
}
