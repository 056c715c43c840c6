import { openJobReader } from '../../storage/job-reader';
import type { PlayerLink } from '../player-link';
import type { StateFeed } from '../state-feed';
import { MseFeeder } from './feeder';
import { looksLikeMp3, openMp3 } from './mp3';
import { NotFragmented, openFragmentedMp4 } from './mp4';
import { Unsupported, unsupportedText, type MediaSegments } from './segments';
import { DownloadStopped, StoredBytes } from './stored-bytes';
import { openWebm } from './webm';
import { sentence, t } from '../../words/i18n';

export interface MseInput {
  video: HTMLVideoElement;
  jobId: string;
  type: string;
  size: number;
  feed: StateFeed;
  link: PlayerLink;
  /** Told when feeding fails after it started (a decoder error, the download stopped). */
  onFailure: (message: string) => void;
}

export type MseStart = { started: true } | { started: false; reason: string };

/**
 * Firefox (no service worker in extension pages): plays a job while it downloads through Media
 * Source Extensions, for WebM (VP8/VP9/AV1 + Opus/Vorbis), fragmented MP4, and plain MP4
 * remuxed into fragments by mp4box (moov first or at the end: then the moov is read before the
 * media, which the engine fetches first as the player asks for it), and MP3 remuxed into
 * fragmented MP4 (mp3.ts). Anything else is refused
 * with the reason (in the page's words): the player then plays it once the download completes.
 */
export async function startMse(input: MseInput): Promise<MseStart> {
  if (typeof MediaSource === 'undefined') return { started: false, reason: t('playerWhyNoMse') };
  const store = await openJobReader(input.jobId);
  const reader = new StoredBytes(store, input.jobId, input.size, input.feed, (position) => input.link.position(position));
  let segments: MediaSegments;
  try {
    segments = await openContainer(reader);
    if (!MediaSource.isTypeSupported(segments.mime))
      throw new Unsupported('type', `this browser cannot play ${segments.mime} through Media Source`, segments.mime);
  } catch (error) {
    store.close();
    if (error instanceof Unsupported) return { started: false, reason: unsupportedText(error) };
    if (error instanceof DownloadStopped) return { started: false, reason: t('playerWhyStopped') };
    throw error;
  }
  const feeder = new MseFeeder(input.video, segments, reader, (position) => input.link.position(position));
  addEventListener('pagehide', () => feeder.stop());
  void feeder.run().catch((error: unknown) => {
    feeder.stop();
    if (error instanceof DownloadStopped) return;
    // The media element's or MSE's own words are the browser's (English): the page says what failed, the console the details.
    console.warn('Stitch: feeding the player failed', error);
    input.onFailure(
      t('playerPlaybackFailed', error instanceof Unsupported ? sentence(unsupportedText(error)) : t('playerWhyMediaRefused')),
    );
  });
  return { started: true };
}

/** WebM, MP4 (fragmented as it is, plain remuxed) or MP3 (remuxed), told by their first bytes. */
async function openContainer(reader: StoredBytes): Promise<MediaSegments> {
  const magic = await reader.read(0, 12);
  if (magic[0] === 0x1a && magic[1] === 0x45 && magic[2] === 0xdf && magic[3] === 0xa3) return openWebm(reader);
  if (String.fromCharCode(...magic.subarray(4, 8)) === 'ftyp') {
    try {
      return await openFragmentedMp4(reader);
    } catch (error) {
      if (!(error instanceof NotFragmented)) throw error;
      // mp4box (~100 kB) is loaded only for plain MP4.
      const { openPlainMp4 } = await import('./plain-mp4');
      return openPlainMp4(reader);
    }
  }
  if (looksLikeMp3(magic)) return openMp3(reader);
  throw new Unsupported('format', 'only WebM, MP4 and MP3 can be played before the download completes in this browser');
}
