/**
 * The one message protocol between Stitch's pages (popup, options, player) and the background.
 * Pages never touch the engine and never write to the store; they only send these messages (the
 * player alone reads a finished job's stored bytes, from IndexedDB, to play it). Changes here are
 * additive only: new request types and new optional fields.
 *
 * Requests (page → background): `browser.runtime.sendMessage(request)` with a `Request` below;
 * the background answers every request with a `Reply` envelope: `{ ok: true, value }` or
 * `{ ok: false, error, errors? }` (`error` is one plain sentence for the user; `errors` lists
 * per-field settings problems). `callBackground(send, request)` wraps this and is typed by
 * `ReplyOf<type>`. Each request's fields are declared once, as a valibot schema in
 * message-schemas.ts (the types here are derived from them; only the background imports the
 * schemas). Unknown or malformed requests get `{ ok: false }`, never a crash.
 *
 * Live updates: `browser.runtime.connect({ name: UI_PORT })`. The background first posts a
 * `{ type: 'snapshot' }` with every job and the recent notices, then `job` (a job changed;
 * replace the row with the same id), `removed` (forget a row), `notice` (something happened
 * that belongs to no job, e.g. a download left to the browser), `aria2` (the downloads handed to
 * aria2), `watched` (every download left with the browser that Stitch watches, right after the
 * snapshot and again whenever one changes, at most once a second; replace the list). Progress is
 * posted at most about 4 times a second per job. Pages send nothing on the port; disconnecting unsubscribes.
 *
 * "Copy URL" is done by the page itself (`navigator.clipboard.writeText(job.url)`).
 *
 * Test contract for the pages (the e2e tests find elements only by these `data-testid`s):
 *   popup:   job-list; one job-row per job, with attributes data-job-id="<id>" and
 *            data-state="<JobViewState>"; inside a row: job-filename, job-size, job-progress
 *            (a <progress> whose value/max are received/size bytes, or aria-valuenow 0–100),
 *            job-state (the state in words), job-rate, job-eta, job-error (only when error),
 *            job-notices (only when it has notices), job-mirrors, and buttons job-pause, job-resume, job-cancel, job-retry,
 *            job-open, job-show, job-copy-url, job-save-as (present only when the action applies),
            and job-play (a link opening the player; only for audio/video the browser can play
            whose bytes are still stored).
 *            job-undo (a cancelled job, for a few seconds), job-hand-back (a job taken over), job-origin
 *            (host and date), job-retrying (only while no source delivers), job-details-toggle (shows
 *            the row's details: every action but the first, mirrors, notices, the URL), job-host,
 *            job-move-up and job-move-down (a queued job), job-speed-limit (KB/s, empty: none),
 *            job-speed-limit-clear (lifts the download's own limit; only while it has one),
 *            job-speed-limit-error (only while what was typed is refused; the limit stays),
 *            job-limit (on the collapsed row: its own speed limit, only while it has one),
 *            job-queue-place (a queued job's place: "3rd").
 *            Page-wide: summary (the header's figures: how many download, their speed, how many
 *            stalled and queued, the limit for all), pause-all, resume-all, cancel-all, undo-all (one Cancel all's Undo, in undo-all-bar), clear-finished, bypass-next (aria-pressed), add-url-toggle, add-url-input, add-url-submit,
 *            notice (one per page-wide notice), empty (shown when there are no jobs).
 *            Downloads left with the browser: watched-list (hidden while none is watched); one
 *            watched-row per download, with data-download-id="<the browser's downloads id>"; inside
 *            a row: watched-name, watched-state (the state in words), watched-progress (a <progress>
 *            whose value/max are received/size bytes; no value while the size is unknown),
 *            watched-figures (host, size, rate), and the button watched-take-over.
 *            Video streams the open tabs loaded: stream-list (hidden while none); one stream-row per
 *            stream, with data-url="<the playlist's URL>"; inside a row: stream-title, stream-figures
 *            (picture size, duration, estimated size, host), stream-refused (only when refused),
 *            stream-variant (a <select> of the qualities, the best first; only when there are several),
 *            and the button stream-download.
 *   options: settings-form; setting-takeover (checkbox), setting-threshold-mb (number, MB =
 *            2^20 bytes, as every page counts), setting-excluded-types and setting-excluded-sites (textareas, one per
 *            line), setting-save-while-downloading (checkbox, Chrome only), setting-concurrent,
 *            setting-connections, setting-connections-per-site (textarea,
 *            one "host N" per line), setting-min-block-kib,
 *            setting-max-block-kib, setting-speed-limit-kbps (empty = no limit, KB/s = 2^10
 *            bytes/s); mirror-rule-add (button), one mirror-rule per rule containing
 *            mirror-rule-pattern (input), mirror-rule-mirrors (textarea, one prefix per line),
 *            mirror-rule-sample-url (input), mirror-rule-test (button), mirror-rule-test-result,
 *            mirror-rule-remove; settings-save (button), settings-status (shows "Saved" after a
 *            successful save), settings-errors (lists validation errors), settings-export
 *            (button), settings-import (file input), settings-reset (button).
 *   player:  player-media (the <video> element), player-state (the job's state in words),
 *            player-message (why playback waits, or is impossible until the download completes),
 *            player-stored (the bar of stored ranges, with data-stored="start-end,…" in bytes),
 *            player-route (data-route="stream" | "mse" | "blob" | "hls": how the bytes reach the element).
 *
 * Player port: `browser.runtime.connect({ name: PLAYER_PORT })`, then the page posts
 * `{ type: 'attach', id }`; the background answers with `player-state` messages (the job, the
 * stored byte ranges, whether the stored copy was freed after saving) whenever they change: one
 * per turn of its event loop in which the engine stored or discarded bytes (its `stored` and
 * `discarded` events, forwarded), or the job changed. While a player is attached, the job's
 * stored bytes are kept after saving. The page may post `{ type: 'position', position,
 * durationSeconds }`: the byte it needs next (the engine fetches what lies just ahead of it
 * first; each attached page has its own position, the most recently moved first) and the
 * media's duration (sizes that window). In Chrome the stream route learns the position from the
 * element's range requests instead (per page, from the request's client).
 */
import type * as v from 'valibot';
import type { FailureFacts } from './engine/errors';
import type { ConnectionsWhy } from './engine/scheduler/connections/connection-count';
import type { DropReason, StoredNotice } from './engine/notice';
import type { RefusalReason as StreamRefusalReason } from './engine/streams/hls-playlist';
import type { RelinkMismatch } from './engine/relink';
import type { StreamTimeline } from './engine/streams/stream-layout';
import type { ARIA2_ACTION, JOB_ACTION, PLAYER_PAGE_MESSAGE, REQUESTS } from './message-schemas';
import type { Settings, SettingsError } from './settings/schema';

/** Name of the `runtime.connect` port that streams job updates to a page. */
export const UI_PORT = 'stitch-ui';

/** Name of the `runtime.connect` port of a player page (see the header comment). */
export const PLAYER_PORT = 'stitch-player';

/** Path of a job's stream URL under the extension's origin (answered by Chrome's service worker). */
export const STREAM_PATH = '/stream/';

/** A job as the pages see it: the engine's state plus what the background adds (saving). */
export type JobViewState =
  | 'queued' // waiting for a free slot (concurrency limit)
  | 'running'
  | 'paused' // by the user, or by Stitch itself with an `error` (e.g. storage full)
  | 'verifying'
  | 'saving' // complete and verified; being handed to the browser's downloads
  | 'saved' // in the download folder; stored bytes freed
  | 'failed'
  | 'cancelled';

/** How much one source (the primary URL or a mirror) contributed. */
export interface MirrorContribution {
  /** The URL this source serves the file from. */
  url: string;
  /** Host (and port) for a short label. */
  host: string;
  /** Bytes received from it so far. */
  bytes: number;
  /** Bytes/s over the last few seconds. */
  rate: number;
  /** Dropped sources say why, as data the pages put in words. */
  dropped?: DropReason;
  /** Connections to it now, while the job runs, and why that many (the connection count's reason, as data). */
  connections?: number;
  connectionsWhy?: ConnectionsWhy;
}

export interface JobView {
  id: string;
  /** The URL the user asked for (copy URL copies this). */
  url: string;
  /** The name it is (or will be) saved under; a guess from the URL until the server answers. */
  filename: string;
  /** Total bytes; undefined while unknown. */
  size?: number;
  received: number;
  /** Bytes/s now; 0 when not running. */
  rate: number;
  /** Seconds left at the current rate, when known. */
  etaSeconds?: number;
  /**
   * Running, but nothing has arrived for a few seconds (and no speed limit holds it back): Stitch
   * waits on its stall timeout or reconnects. `rate` is then 0 and `etaSeconds` absent.
   */
  stalled?: true;
  state: JobViewState;
  /** While queued: its place in the queue (position 1 starts next) of how many wait. */
  queuePlace?: { position: number; of: number };
  /** This download's own speed limit in bytes/s (the settings' limit for all applies too); absent: none. */
  speedLimit?: number;
  /** True when the user paused it: it is not resumed automatically. */
  pausedByUser: boolean;
  /** Why it failed or paused itself, in the engine's English words (for logs); absent when all is well. */
  error?: string;
  /** Machine-readable cause of `error` (engine codes, or 'save-failed', 'storage-full'…). */
  errorCode?: string;
  /** What `error` says, as data the pages put in the user's language (`code` is `errorCode`). */
  failure?: JobFailure;
  /** Things that happened without stopping the job, oldest first, as data (an older version's: English strings). */
  notices: StoredNotice[];
  /** One entry per source; empty before the first byte, one entry for a single URL. */
  mirrors: MirrorContribution[];
  /**
   * Running, but no source delivers: each failed its last `attempts` (a server answering 503…)
   * and Stitch waits to try again, giving up after `maxAttempts`. `failure`: the last one.
   */
  retrying?: { attempts: number; maxAttempts: number; retryAt?: number; failure: FailureFacts };
  /** Stitch took it over from a download the browser had started (it can be handed back). */
  takenOver?: boolean;
  /** A video stream saved as one file: no new link, no hand-off to aria2 (its URL is a playlist, not the file). */
  stream?: true;
  /** Cancelled or removed, but can be brought back (action `undo`) until then (ms since the epoch). */
  undoUntil?: number;
  /** Cancelled by one Cancel all with others: one Undo (`all-action` undo with the group's ids) brings them all back. */
  undoGroup?: string;
  /** The browser's downloads id once saved (open file / show in folder use it). */
  savedDownloadId?: number;
  /** Saved under a safe name (`filename`) because the system could not write this one. */
  renamedFrom?: string;
  /**
   * Audio or video whose bytes are stored (or will be): the player can play it, progressively
   * while it downloads. Pages also ask the browser (canPlayType) before offering "Play".
   */
  canPlay?: boolean;
  contentType?: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * Why a job failed or paused itself: the engine's facts, or the background's code ('save-failed',
 * 'save-no-room'); `room`: for want of room on the disk, how much was needed and how much was free.
 */
export type JobFailure = Omit<FailureFacts, 'code'> & { code: string; room?: { needed: number; free: number } };

/** Something that belongs to no job, e.g. a download Stitch left to the browser and why. */
export interface UiNotice {
  id: string;
  at: number;
  message: string;
  url?: string;
}

/** What one job (or every job) can be told to do; see `JOB_ACTION` in message-schemas.ts. */
export type JobAction = v.InferOutput<typeof JOB_ACTION>;

/** How long a cancelled or removed job can be brought back. */
export const UNDO_MS = 10_000;

/** Result of checking one mirror of a rule against a sample URL. */
export interface MirrorTestResult {
  /** The URL that was asked (the sample URL rewritten to this mirror). */
  url: string;
  ok: boolean;
  /** Size it reported, when it answered. */
  size?: number;
  /** In the user's words: "Same size: 104,857,600 bytes.", "Answered with error 404.", "The size differs: …". */
  message: string;
}

/** What can go wrong with aria2 (reaching it) or with a download in it (aria2's own outcome). */
export type Aria2Trouble =
  | 'no-endpoint'
  | 'endpoint-refused'
  | 'unreachable'
  | 'unauthorized'
  | 'not-aria2'
  | 'refused'
  | 'disk-full'
  | 'checksum'
  | 'not-found'
  | 'refused-by-server'
  | 'network'
  | 'name-taken'
  | 'other';

/** The answer of aria2 to _Test_: its version, or why it did not give one. */
export type Aria2Check = { version: string } | { problem: Aria2Trouble };

/** One download Stitch handed to aria2, as the popup lists it. */
export interface Aria2Row {
  gid: string;
  state: 'running' | 'waiting' | 'paused' | 'failed' | 'done' | 'removed';
  name: string;
  url: string;
  totalBytes: number;
  doneBytes: number;
  bytesPerSecond: number;
  problem?: Aria2Trouble;
}

export type Aria2Action = v.InferOutput<typeof ARIA2_ACTION>;

/** One download left with the browser, which Stitch watches (and rescues if it breaks or stalls), as the popup lists it. */
export interface WatchedRow {
  /** The browser's downloads id. */
  downloadId: number;
  /** The file's name: the browser's, without its folder (the URL's last part until the browser has one). */
  name: string;
  url: string;
  /** Host (and port) for a short label. */
  host: string;
  received: number;
  /** Total bytes; absent while unknown. */
  size?: number;
  /** Bytes/s over the last few seconds; 0 while nothing comes. */
  bytesPerSecond: number;
  /** `resuming`: it broke off and the browser is asked to resume it; `paused`: by the user. */
  state: 'downloading' | 'resuming' | 'paused';
}

/** One quality of a stream: its picture size, bits per second, and the size its download would have. */
export interface StreamVariantView {
  width?: number;
  height?: number;
  bandwidth?: number;
  estimatedBytes?: number;
}

/** A video stream (an HLS playlist) a tab loaded, as the popup lists it. */
export interface StreamRow {
  /** The playlist's URL: the row's id, and what `download-stream` takes. */
  url: string;
  /** The tab's title (the saved file's name), else the playlist's name. */
  title: string;
  /** The page's host (and port). */
  host: string;
  /** The chosen variant's picture size, when the playlist says it. */
  width?: number;
  height?: number;
  /** Bits per second of the variant a download takes. */
  bandwidth?: number;
  durationSeconds?: number;
  /** About how many bytes a download saves (its bandwidth over its duration). */
  estimatedBytes?: number;
  /** The stream cannot be downloaded, and why (as data, for the pages' words). */
  refused?: StreamRefusalReason;
  /** The qualities a master playlist offers, the best (what a download takes unless one is chosen) first. */
  variants?: StreamVariantView[];
  /** Its playlists could not be read (yet): the row offers Download all the same. */
  unread?: boolean;
  /** A live stream: the row offers Record instead of Download. */
  live?: true;
  /** Its recording under way (or being saved). */
  recording?: StreamRecordingView;
}

/** A live stream's recording, as the popup shows it. */
export interface StreamRecordingView {
  seconds: number;
  bytes: number;
  /** Stopped: the file is being saved. */
  saving: boolean;
}

/**
 * The value of a successful reply to each request type. The requests' fields are declared once,
 * as schemas, in message-schemas.ts (the background parses every request with them).
 */
export interface Replies {
  'aria2-test': Aria2Check;
  'aria2-send': { gid: string };
  'aria2-action': Record<string, never>;
  'list-jobs': { jobs: JobView[]; notices: UiNotice[] };
  'job-action': { job?: JobView };
  'all-action': { affected: number };
  'clear-finished': { removed: number };
  'dismiss-notices': Record<string, never>;
  'add-url': { job: JobView };
  'open-file': Record<string, never>;
  'show-in-folder': Record<string, never>;
  /** No `path` when the file is gone from disk. */
  'saved-path': { path?: string };
  'save-as': { job?: JobView };
  'get-settings': { settings: Settings; defaults: Settings };
  'set-settings': { settings: Settings };
  'import-settings': { settings: Settings };
  'test-mirror-rule': { original: MirrorTestResult; mirrors: MirrorTestResult[] };
  /** `stream`: a stream job's segments, which its player plays through hls.js. */
  play: { job: JobView; started: boolean; stream?: StreamTimeline };
  bypass: { next: boolean };
  relink: { job: JobView; mismatch?: string; mismatchFacts?: RelinkMismatch };
  'queue-move': { job: JobView };
  'job-speed-limit': { job: JobView };
  'hand-to-browser': Record<string, never>;
  'take-over-watched': { taken: boolean };
  'download-stream': { job: JobView };
  'record-stream': Record<string, never>;
  'stop-recording': Record<string, never>;
}

export type RequestType = keyof Replies;
/** A request of type `T` as a page sends it (its schema's input; `type` apart, so that callers infer `T`). */
export type RequestOf<T extends RequestType> = { type: T } & Omit<v.InferInput<(typeof REQUESTS)[T]>, 'type'>;
export type ReplyOf<T extends RequestType> = Replies[T];
/** Any request a page may send. */
export type Request = { [T in RequestType]: RequestOf<T> }[RequestType];

export type Reply<T> = { ok: true; value: T } | { ok: false; error: string; errors?: SettingsError[]; aria2?: Aria2Trouble };

/** Messages the background posts on the UI port. */
export type PortMessage =
  | { type: 'snapshot'; jobs: JobView[]; notices: UiNotice[] }
  | { type: 'job'; job: JobView }
  | { type: 'removed'; id: string }
  | { type: 'notice'; notice: UiNotice }
  /**
   * The downloads handed to aria2, why they could not be read when aria2 could not be reached, and
   * whether an endpoint is set (rows then offer Send to aria2).
   */
  | { type: 'aria2'; configured: boolean; rows: Aria2Row[]; trouble?: Aria2Trouble }
  /** The downloads left with the browser that Stitch watches, in the order it began watching them. */
  | { type: 'watched'; rows: WatchedRow[] }
  /** The video streams the open tabs loaded, the newest first. */
  | { type: 'streams'; rows: StreamRow[] };

/** Messages a player page posts on the player port (`attach`, then `position`; see the header comment). */
export type PlayerPageMessage = v.InferInput<typeof PLAYER_PAGE_MESSAGE>;

/** Messages the background posts on the player port. */
export type PlayerPortMessage = {
  type: 'player-state';
  /** Undefined when the job is gone (cancelled or cleared). */
  job?: JobView;
  /** Stored byte ranges [start, end), sorted and merged. */
  stored: { start: number; end: number }[];
  /** The file was saved and its stored copy freed: nothing is left to play from. */
  bytesFreed: boolean;
};

/** Thrown by `callBackground` when the background answered ok:false. */
export class BackgroundError extends Error {
  override readonly name = 'BackgroundError';
  constructor(
    message: string,
    readonly errors: SettingsError[] = [],
    /** Set when aria2 could not take or act on a download: why, for the page to put in words. */
    readonly aria2?: Aria2Trouble,
  ) {
    super(message);
  }
}

/**
 * Sends one request and returns the typed value, throwing `BackgroundError` on a refusal.
 * Pages pass `(m) => browser.runtime.sendMessage(m)`.
 */
export async function callBackground<T extends RequestType>(
  send: (message: unknown) => Promise<unknown>,
  request: RequestOf<T>,
): Promise<ReplyOf<T>> {
  const reply = (await send(request)) as Reply<ReplyOf<T>> | undefined;
  if (!reply || typeof reply !== 'object') throw new BackgroundError('Stitch did not answer; try again in a moment');
  if (!reply.ok) throw new BackgroundError(reply.error, reply.errors, reply.aria2);
  return reply.value;
}
