import { callBackground, type JobView, type PlayerPortMessage } from '../messages';
import { errorText } from '../pages-shared/connection';
import { failureText, retryingText } from '../words/failure-text';
import { t } from '../words/i18n';
import { completeFileUrl } from './blob-source';
import { mediaTypeOf } from '../media-type';
import { startMse, type MseStart } from './mse/mse-route';
import { startHls, type HlsInput } from './hls/hls-route';
import type { StreamTimeline } from '../engine/streams/stream-layout';
import { PlayerLink, type PlayerPortLike } from './player-link';
import type { PlayerPage } from './player-page';
import { allStored, hopeless, StateFeed } from './state-feed';
import { controlled, hasStreamRoute, streamUrl } from './stream-source';

export interface PlayerExtension {
  send: (message: unknown) => Promise<unknown>;
  /** Opens the player port. */
  connect: () => PlayerPortLike;
}

export type PlayerQuery = { id: string } | { url: string };

/** How often a failed element is given its source again while the download goes on. */
const RETRY_MS = 1000;

/**
 * Plays one job: finds or starts it, then picks how its bytes reach the element:
 * - a stream job (HLS or DASH saved as one file), in both browsers: hls.js over the stored segments;
 * - Chrome: the service worker's stream URL (range requests answered from the store);
 * - Firefox: Media Source Extensions fed from the store, for WebM and MP4 (plain MP4 remuxed by mp4box);
 * - otherwise, or when the file is complete: a blob URL of the whole file, once complete.
 */
export async function runPlayer(page: PlayerPage, ext: PlayerExtension, query: PlayerQuery): Promise<void> {
  let job: JobView;
  let started: boolean;
  let stream: StreamTimeline | undefined;
  try {
    ({ job, started, stream } = await callBackground(
      ext.send,
      'id' in query ? { type: 'play', id: query.id } : { type: 'play', url: query.url },
    ));
  } catch (error) {
    page.say(errorText(error), 'error');
    return;
  }
  // A reload plays this job again (a ?url= would look for it, or start another).
  history.replaceState(null, '', `?id=${encodeURIComponent(job.id)}`);
  const feed = new StateFeed();
  const link = new PlayerLink(ext.connect, job.id, (state) => {
    page.showState(state);
    feed.push(state);
  });
  addEventListener('pagehide', () => link.stop());
  markFirstFrame(page.video);
  page.video.addEventListener('durationchange', () => {
    if (Number.isFinite(page.video.duration)) link.position(undefined, page.video.duration);
  });

  page.say(t('playerWaitingServer'), 'wait');
  const first = await feed.until((s) => hopeless(s) || s.job?.size !== undefined || s.job?.retrying !== undefined);
  if (hopeless(first)) return page.say(hopelessText(first), 'error');
  if (first.job?.retrying) {
    // Each failed attempt is said as it happens, with when Stitch gives up.
    const answered = await feed.until((s) => {
      if (s.job?.retrying) page.say(retryingText(s.job.retrying), 'wait');
      return hopeless(s) || s.job?.size !== undefined;
    });
    if (hopeless(answered)) return page.say(hopelessText(answered), 'error');
  }
  const known = feed.latest!;
  const type = mediaTypeOf(known.job!.contentType, known.job!.filename);
  if (!type) {
    const what = t('playerNotMedia', known.job!.filename, known.job!.contentType ?? t('playerUnknownType'));
    // Started only to play it: a download nobody asked for must not keep running.
    if (!started) return page.say(what, 'error');
    await callBackground(ext.send, { type: 'job-action', action: 'cancel', id: job.id }).catch(() => undefined);
    return page.say(`${what} ${t('playerStoppedDownload')}`, 'error');
  }

  if (stream) return playHlsStream(page, { jobId: job.id, timeline: stream, size: first.job!.size!, feed, link });
  if (hasStreamRoute()) return playStream(page, job.id, feed);
  if (allStored(first)) return playComplete(page, job.id, type, feed);
  const mse: MseStart = await startMse({
    video: page.video,
    jobId: job.id,
    type,
    size: first.job!.size!,
    feed,
    link,
    onFailure: (message) => page.say(feed.latest && hopeless(feed.latest) ? hopelessText(feed.latest) : message, 'error'),
  });
  if (mse.started) {
    page.setRoute('mse');
    followWaiting(page);
    autoplay(page);
    return;
  }
  page.say(t('playerNotProgressive', mse.reason), 'info');
  const done = await feed.until((s) => allStored(s) || hopeless(s));
  if (hopeless(done)) return page.say(hopelessText(done), 'error');
  return playComplete(page, job.id, type, feed);
}

/**
 * A stream job (HLS or DASH saved as one file): hls.js plays its segments from the stored file, in
 * both browsers (a joined MPEG-TS file plays in no browser's <video> by itself).
 */
async function playHlsStream(page: PlayerPage, input: Omit<HlsInput, 'video' | 'onFailure'>): Promise<void> {
  if (hasStreamRoute() && !(await workerControls(page))) return;
  const { feed } = input;
  const started = await startHls({
    ...input,
    video: page.video,
    onFailure: (message) => page.say(feed.latest && hopeless(feed.latest) ? hopelessText(feed.latest) : message, 'error'),
  });
  if (!started.started) return page.say(t('playerNotProgressive', started.reason), 'error');
  page.setRoute('hls');
  followWaiting(page);
  autoplay(page);
}

/**
 * Chrome: true once the page is controlled by the service worker (which answers the stream URL).
 * The first page after an update may not be: it is reloaded once, then told.
 */
async function workerControls(page: PlayerPage): Promise<boolean> {
  if (!(await controlled())) {
    if (!sessionStorage.getItem('stitch-reloaded')) {
      sessionStorage.setItem('stitch-reloaded', '1');
      location.reload();
      return false;
    }
    page.say(t('playerNoWorker'), 'error');
    return false;
  }
  sessionStorage.removeItem('stitch-reloaded');
  return true;
}

/** Chrome: the element reads the stream URL; the service worker answers from the store. */
async function playStream(page: PlayerPage, jobId: string, feed: StateFeed): Promise<void> {
  page.setRoute('stream');
  if (!(await workerControls(page))) return;
  const video = page.video;
  const url = streamUrl(jobId);
  let everPlayable = false;
  video.addEventListener('loadedmetadata', () => (everPlayable = true));
  video.addEventListener('error', () => {
    const state = feed.latest;
    if (state && hopeless(state)) return page.say(hopelessText(state), 'error');
    if (!everPlayable && video.error?.code === MediaError.MEDIA_ERR_SRC_NOT_SUPPORTED && state?.stored.length) {
      return page.say(t('playerCannotPlay'), 'error');
    }
    // The worker gave up waiting for bytes (a stalled download): try again from the same time.
    const at = video.currentTime;
    page.say(t('playerWaitingDownload'), 'wait');
    setTimeout(() => {
      video.src = url;
      if (at > 0) video.currentTime = at;
      autoplay(page);
    }, RETRY_MS);
  });
  followWaiting(page);
  video.src = url;
  performance.mark('stitch:src');
  autoplay(page);
}

/** The whole file from a blob URL (the download is complete). */
async function playComplete(page: PlayerPage, jobId: string, type: string, feed: StateFeed): Promise<void> {
  const size = feed.latest?.job?.size ?? 0;
  try {
    const { url, revoke } = await completeFileUrl(jobId, size, type);
    addEventListener('pagehide', revoke);
    page.setRoute('blob');
    page.say('');
    followWaiting(page);
    page.video.src = url;
    performance.mark('stitch:src');
    autoplay(page);
  } catch (error) {
    page.say(t('playerReadFailed', errorText(error)), 'error');
  }
}

function followWaiting(page: PlayerPage): void {
  const video = page.video;
  video.addEventListener('waiting', () => page.say(t('playerWaitingDownload'), 'wait'));
  video.addEventListener('playing', () => page.say(''));
  video.addEventListener('seeking', () => page.say(t('playerSeeking'), 'wait'));
  video.addEventListener('seeked', () => page.say(''));
  // A wait can end without a 'playing' event (Chromium, after the stream route's 'waiting'): time
  // that moves means it plays.
  video.addEventListener('timeupdate', () => {
    if (!video.paused && !video.seeking) page.clearWait();
  });
}

/** Starts playing; a browser that wants a gesture first gets one from the Play control. */
function autoplay(page: PlayerPage): void {
  void page.video.play().catch((error: unknown) => {
    if ((error as { name?: string }).name === 'NotAllowedError') page.say(t('playerPressPlay'), 'info');
  });
}

/** performance marks for measurements: the first frame shown. */
function markFirstFrame(video: HTMLVideoElement): void {
  const mark = () => performance.getEntriesByName('stitch:first-frame').length === 0 && performance.mark('stitch:first-frame');
  if ('requestVideoFrameCallback' in video) video.requestVideoFrameCallback(() => mark());
  // Audio has no frames: its first one is when it starts playing.
  video.addEventListener('playing', () => (video.videoWidth === 0 || !('requestVideoFrameCallback' in video)) && mark(), { once: true });
}

function hopelessText(state: PlayerPortMessage): string {
  const job = state.job;
  if (!job) return t('playerJobGone');
  if (state.bytesFreed) return t('playerBytesFreed', job.filename);
  if (job.state === 'failed') return t('playerJobFailed', failureText(job.failure));
  return t('playerJobCancelled');
}
