import type { ErrorData } from 'hls.js';
import type { StreamTimeline } from '../../engine/streams/stream-layout';
import { openJobReader } from '../../storage/job-reader';
import { t } from '../../words/i18n';
import { StoredBytes } from '../mse/stored-bytes';
import type { MseInput, MseStart } from '../mse/mse-route';
import { hasStreamRoute, streamUrl } from '../stream-source';
import { storedLoader, type ReadRange } from './stored-loader';
import { storedPlaylist } from './stored-playlist';

/** What the MSE route takes, but the type: a stream's timeline instead (its segments' lengths and durations). */
export type HlsInput = Omit<MseInput, 'type'> & { timeline: StreamTimeline };

/**
 * A stream job (an HLS or DASH stream saved as one file) plays through hls.js, in both browsers, from the
 * stored file: a playlist of byte ranges of it, each read as soon as it is stored. A segment the
 * player asks for (a seek's included) tells the engine where the player is, so it is fetched
 * first. Chrome reads the ranges through the service worker's stream route (which reads the store
 * and tells the engine); Firefox, whose extension pages have no service worker, reads the store
 * itself and tells the engine through the player port.
 */
export async function startHls(input: HlsInput): Promise<MseStart> {
  // hls.js's light build (no subtitles, alternate audio, DRM: a saved stream has none) is loaded only for streams.
  const { default: Hls, LoadStats } = await import('hls.js/light');
  if (!Hls.isSupported()) return { started: false, reason: t('playerWhyNoMse') };
  const { read, close } = await rangeReader(input);
  const playlistUrl = new URL('stored-stream.m3u8', location.href).href;
  const hls = new Hls({
    loader: storedLoader({
      playlistUrl,
      playlist: storedPlaylist(input.timeline, new URL('stored-stream', location.href).href),
      read,
      newStats: () => new LoadStats(),
    }),
    // The extension pages' policy allows no blob: workers: the transmuxer runs on the page.
    enableWorker: false,
  });
  addEventListener('pagehide', () => {
    hls.destroy();
    close();
  });
  hls.on(Hls.Events.ERROR, (_event, data: ErrorData) => {
    if (!data.fatal) return;
    hls.destroy();
    close();
    console.warn('Stitch: playing the stream failed', data);
    // A download that stopped for good is said as such by the caller.
    input.onFailure(t('playerPlaybackFailed', t('playerWhyMediaRefused')));
  });
  hls.loadSource(playlistUrl);
  hls.attachMedia(input.video);
  return { started: true };
}

/** How the page reads ranges of the stored file: Chrome's stream route, else the store itself. */
async function rangeReader(input: HlsInput): Promise<{ read: ReadRange; close: () => void }> {
  if (hasStreamRoute()) {
    const url = streamUrl(input.jobId);
    return {
      read: async (start, end, signal) => {
        const response = await fetch(url, { headers: { Range: `bytes=${start}-${end - 1}` }, signal, cache: 'no-store' });
        if (response.status !== 206) throw new Error(`the stored stream answered ${response.status}: ${await response.text()}`);
        return response.arrayBuffer();
      },
      close: () => {},
    };
  }
  const store = await openJobReader(input.jobId);
  const bytes = new StoredBytes(store, input.jobId, input.size, input.feed, (position) => input.link.position(position));
  return {
    read: async (start, end, signal) => (await bytes.read(start, end, signal)).buffer as ArrayBuffer,
    close: () => store.close(),
  };
}
