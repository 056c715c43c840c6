/**
 * Watch and rescue (issue 27): what to do with a download left with the browser, given how it looked
 * at each poll. The browser gives up too soon: Firefox never resumes an interrupted download by
 * itself, Chrome stops after 5 tries, and neither does anything about a connection that stalls.
 */

/** One look at a watched download (downloads.search). */
export interface DownloadSample {
  /** Milliseconds on the watcher's clock. */
  at: number;
  state: 'in_progress' | 'interrupted' | 'complete';
  bytesReceived: number;
  /** Paused by the user (or by the watcher, between its pause and resume). */
  paused: boolean;
  canResume: boolean;
  error?: string;
}

/** What the watcher remembers of one download between polls. */
export interface WatchState {
  /** The most bytes seen, and when that count last grew. */
  bytes: number;
  progressAt: number;
  /** Resumes asked since the count last grew. */
  resumes: number;
  /** No resume before this time (backoff). */
  resumeAfter: number;
  /** Pause-and-resume restarts since the count last grew. */
  restarts: number;
}

export type RescueReason = 'not-resumable' | 'no-progress' | 'stalled';

export type WatchAction =
  | { kind: 'wait' }
  /** Interrupted, resumable: downloads.resume. */
  | { kind: 'resume' }
  /** In progress without bytes for the stall timeout: pause and resume, so the browser asks again with a Range request. */
  | { kind: 'restart' }
  /** The browser cannot finish it: Stitch takes it over. */
  | { kind: 'take-over'; reason: RescueReason }
  /** Complete, or cancelled by the user: nothing left to watch. */
  | { kind: 'forget' }
  /**
   * The browser stopped for want of room on its disk: resuming fails again at once, and Stitch
   * would need more room still. Left to the browser, its partial file kept, for the user to free
   * space and resume there.
   */
  | { kind: 'disk-full' };

/**
 * How each browser says its disk had no room: Chrome's interrupt reasons, and Firefox's, which says
 * FILE_FAILED for a write that failed on a full disk (measured on a full tmpfs, issue 48).
 */
const DISK_FULL = new Set(['FILE_NO_SPACE', 'FILE_TOO_LARGE', 'FILE_FAILED']);

/** Resume backoff: the first retry at once, then doubling up to the cap. */
export const RESUME_FIRST_DELAY_MS = 1_000;
export const RESUME_MAX_DELAY_MS = 30_000;
/**
 * Resumes without a single new byte before Stitch takes the download over. Few: Chrome quietly
 * ignores an extension's resume once its own 5 tries are used up (it wants a user's click then).
 */
export const MAX_RESUMES_WITHOUT_PROGRESS = 3;
/**
 * Restarts of a stalled download before Stitch takes it over. One: Chrome's pause only holds the
 * connection open, so its resume goes on reading the same stalled one; Firefox's makes a new request.
 */
export const MAX_RESTARTS_WITHOUT_PROGRESS = 1;

export function startWatching(first: Pick<DownloadSample, 'at' | 'bytesReceived'>): WatchState {
  return { bytes: first.bytesReceived, progressAt: first.at, resumes: 0, resumeAfter: first.at, restarts: 0 };
}

/**
 * The next step for one download, and what to remember of it. `stallTimeoutMs`: the user's stall
 * timeout, the same as for Stitch's own requests.
 */
export function nextStep(state: WatchState, sample: DownloadSample, stallTimeoutMs: number): { state: WatchState; action: WatchAction } {
  if (sample.state === 'complete' || sample.error === 'USER_CANCELED') return { state, action: { kind: 'forget' } };
  // Any new byte starts the counts afresh: the browser is getting on with it.
  const progressed = sample.bytesReceived > state.bytes;
  const now: WatchState = progressed
    ? { bytes: sample.bytesReceived, progressAt: sample.at, resumes: 0, resumeAfter: sample.at, restarts: 0 }
    : state;
  if (sample.state === 'interrupted') return afterInterruption(now, sample);
  if (sample.paused) return { state: { ...now, progressAt: sample.at }, action: { kind: 'wait' } };
  if (sample.at - now.progressAt < stallTimeoutMs) return { state: now, action: { kind: 'wait' } };
  if (now.restarts >= MAX_RESTARTS_WITHOUT_PROGRESS) return { state: now, action: { kind: 'take-over', reason: 'stalled' } };
  return { state: { ...now, restarts: now.restarts + 1, progressAt: sample.at }, action: { kind: 'restart' } };
}

function afterInterruption(state: WatchState, sample: DownloadSample): { state: WatchState; action: WatchAction } {
  if (sample.error !== undefined && DISK_FULL.has(sample.error)) return { state, action: { kind: 'disk-full' } };
  if (!sample.canResume) return { state, action: { kind: 'take-over', reason: 'not-resumable' } };
  // The last resume too gets its wait to bring bytes.
  if (sample.at < state.resumeAfter) return { state, action: { kind: 'wait' } };
  if (state.resumes >= MAX_RESUMES_WITHOUT_PROGRESS) return { state, action: { kind: 'take-over', reason: 'no-progress' } };
  const delay = Math.min(RESUME_FIRST_DELAY_MS * 2 ** state.resumes, RESUME_MAX_DELAY_MS);
  // The stall timeout counts from the resume: the time it lay interrupted is not a stall.
  const resumed = { ...state, resumes: state.resumes + 1, resumeAfter: sample.at + delay, progressAt: sample.at };
  return { state: resumed, action: { kind: 'resume' } };
}
