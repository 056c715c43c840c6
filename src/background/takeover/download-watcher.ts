import type { WatchedRow } from '../../messages';
import { t, type MessageKey } from '../../words/i18n';
import type { BrowserApi, BrowserDownload } from '../browser-api';
import { nextStep, startWatching, type DownloadSample, type RescueReason, type WatchState } from './watch-rescue';

/** How often watched downloads are looked at: a stall or break is acted on within this. */
export const WATCH_POLL_MS = 1_000;
/**
 * Set while anything is watched: Chrome may stop the service worker between two polls all the same,
 * and only an alarm wakes it (its start watches again, `restore`). Chrome's shortest period is 30 s.
 */
export const WATCH_ALARM = 'stitch-watch';
const WATCH_ALARM_MINUTES = 0.5;
/** The storage.local key of the watched downloads' ids: the watch outlives the service worker and the browser. */
export const WATCHED_KEY = 'watchedDownloads';
/** A watched download's rate is its bytes over the polls of about this long. */
export const WATCH_RATE_WINDOW_MS = 3_000;

/** Why Stitch took a watched download over, in the user's words. */
const RESCUE_NOTICE: Record<RescueReason, MessageKey> = {
  'not-resumable': 'noticeRescuedNotResumable',
  'no-progress': 'noticeRescuedNoProgress',
  stalled: 'noticeRescuedStalled',
};

export interface WatcherDeps {
  api: Pick<BrowserApi, 'downloads' | 'storage' | 'alarms'>;
  /** Takes the download over; `why` is told to the user. */
  rescue: (item: BrowserDownload, why: string) => Promise<unknown>;
  /** Tells the user something about a watched download (absent: nothing is said). */
  notice?: (message: string, url?: string) => Promise<unknown>;
  /** Hears the rows whenever they change: at most once per poll, and when a download is watched or taken over. */
  onChange?: (rows: WatchedRow[]) => void;
  /** The user's stall timeout (settings): a download without a byte this long is restarted. */
  stallTimeoutMs: () => Promise<number>;
  now?: () => number;
}

/** What `takeOver` did: `left` when the server would not serve Stitch the same file (the browser keeps it, watched). */
export type TakeOverOutcome = 'taken' | 'left' | 'not-watched';

/** One poll's look at a download, for its rate. */
interface RateSample {
  at: number;
  bytes: number;
}

/**
 * Watches the downloads left with the browser and carries out watch-rescue.ts's steps. One timer
 * polls downloads.search while any download is watched, and none runs otherwise; in Chrome the
 * calls also keep the service worker awake while it watches.
 */
export class DownloadWatcher {
  private readonly watched = new Map<number, WatchState>();
  /** What the popup shows of each watched download, and the recent looks its rate comes from. */
  private readonly shown = new Map<number, { row: WatchedRow; samples: RateSample[] }>();
  /** The rows last told to `onChange`, as JSON: an unchanged list is not told again. */
  private told = '[]';
  private timer: ReturnType<typeof setInterval> | undefined;
  private polling = false;
  private readonly now: () => number;

  constructor(private readonly deps: WatcherDeps) {
    this.now = deps.now ?? Date.now;
  }

  watch(item: BrowserDownload): void {
    this.start(item);
    void this.save();
    this.tell();
    // The item is as the browser told of it when it began (often before it had a name): look again.
    void this.deps.api.downloads.search(item.id).then(
      (now) => {
        if (!now) return;
        this.show(now, this.now());
        this.tell();
      },
      () => {},
    );
  }

  /** The watched downloads as the popup lists them, in the order they were watched. */
  rows(): WatchedRow[] {
    return [...this.shown.values()].map(({ row }) => row);
  }

  /**
   * The user asked Stitch to take a watched download over: the watch ends and it goes the rescue's
   * way, with a notice that says it was asked. Left with the browser (the server would not serve
   * Stitch the same file), it is watched again.
   */
  async takeOver(id: number): Promise<TakeOverOutcome> {
    if (!this.watched.has(id)) return 'not-watched';
    this.forget(id);
    await this.save();
    this.tell();
    const item = await this.deps.api.downloads.search(id).catch(() => undefined);
    if (!item || !isGoing(item)) return 'not-watched';
    let outcome: unknown;
    try {
      outcome = await this.deps.rescue(item, t('noticeTakenOverAsked'));
    } catch (error) {
      await this.watchAgain(id);
      throw error;
    }
    if (outcome !== 'left') return 'taken';
    await this.watchAgain(id);
    return 'left';
  }

  /** Watches a download again if the browser still has it under way (a take-over that did not happen). */
  private async watchAgain(id: number): Promise<void> {
    const item = await this.deps.api.downloads.search(id).catch(() => undefined);
    if (item && isGoing(item) && !this.watched.has(id)) this.watch(item);
  }

  /**
   * Watches again what an earlier worker watched (it was stopped, or the browser restarted: then
   * Chrome leaves the download interrupted, to be resumed). The counts start afresh.
   */
  async restore(): Promise<void> {
    const stored = await this.deps.api.storage.get(WATCHED_KEY).catch(() => undefined);
    const ids = Array.isArray(stored) ? stored.filter((id): id is number => typeof id === 'number') : [];
    const items = await Promise.all(ids.map((id) => this.deps.api.downloads.search(id).catch(() => undefined)));
    for (const item of items) {
      if (item && !this.watched.has(item.id) && isGoing(item)) this.start(item);
    }
    await this.save();
    this.tell();
  }

  private start(item: BrowserDownload): void {
    const at = this.now();
    this.watched.set(item.id, startWatching({ at, bytesReceived: item.bytesReceived ?? 0 }));
    this.shown.set(item.id, { row: rowOf(item, 0), samples: [{ at, bytes: item.bytesReceived ?? 0 }] });
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.poll(), WATCH_POLL_MS);
    void this.deps.api.alarms.create(WATCH_ALARM, WATCH_ALARM_MINUTES).catch(() => {});
  }

  private forget(id: number): void {
    this.watched.delete(id);
    this.shown.delete(id);
  }

  /** Tells `onChange` the rows, if they changed since it was last told. */
  private tell(): void {
    const rows = this.rows();
    const json = JSON.stringify(rows);
    if (json === this.told) return;
    this.told = json;
    this.deps.onChange?.(rows);
  }

  private async save(): Promise<void> {
    await this.deps.api.storage.set(WATCHED_KEY, [...this.watched.keys()]).catch(() => {});
  }

  /** One look at every watched download: the timer's tick. */
  async poll(): Promise<void> {
    // A slow search must not pile polls up.
    if (this.polling) return;
    this.polling = true;
    const before = this.watched.size;
    try {
      await Promise.all([...this.watched.keys()].map((id) => this.look(id)));
      if (this.watched.size !== before) await this.save();
    } finally {
      this.polling = false;
      this.tell();
      if (this.watched.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
        void this.deps.api.alarms.clear(WATCH_ALARM).catch(() => {});
      }
    }
  }

  private async look(id: number): Promise<void> {
    const { downloads } = this.deps.api;
    const item = await downloads.search(id).catch(() => undefined);
    const state = this.watched.get(id);
    if (!item || !state) {
      this.forget(id); // erased from the browser's list, or taken over meanwhile
      return;
    }
    const at = this.now();
    const step = nextStep(state, sampleOf(item, at), await this.deps.stallTimeoutMs());
    this.watched.set(id, step.state);
    this.show(item, at);
    // A refused pause or resume (the browser changed its mind meanwhile) is tried again at a later poll.
    switch (step.action.kind) {
      case 'resume':
        await downloads.resume(id).catch(() => {});
        return;
      case 'restart':
        await downloads.pause(id).catch(() => {});
        await downloads.resume(id).catch(() => {});
        return;
      case 'take-over':
        this.forget(id);
        await this.deps.rescue(item, t(RESCUE_NOTICE[step.action.reason])).catch((error: unknown) => {
          console.error('Stitch: rescue failed', error);
        });
        return;
      case 'forget':
        this.forget(id);
        return;
      case 'disk-full':
        this.forget(id);
        await this.deps.notice?.(t('noticeLeftDiskFull', item.filename ? baseName(item.filename) : item.url), item.finalUrl || item.url);
        return;
      case 'wait':
        return;
    }
  }

  /** The row after one look: its bytes, and the rate over the looks of the last WATCH_RATE_WINDOW_MS. */
  private show(item: BrowserDownload, at: number): void {
    const shown = this.shown.get(item.id);
    if (!shown) return;
    const bytes = item.bytesReceived ?? 0;
    // Fewer bytes than before: the browser started over, and the earlier looks say nothing of now.
    const kept = shown.samples.filter((s) => s.bytes <= bytes && at - s.at <= WATCH_RATE_WINDOW_MS);
    const samples = [...kept, { at, bytes }];
    const first = samples[0]!;
    const flowing = item.state === 'in_progress' && item.paused !== true && at > first.at;
    const rate = flowing ? Math.round(((bytes - first.bytes) * 1000) / (at - first.at)) : 0;
    this.shown.set(item.id, { row: rowOf(item, rate), samples });
  }
}

/** The file's name without its folder (either separator). */
function baseName(path: string): string {
  return path.split(/[\\/]/).pop() || path;
}

/** In progress or broken: still the browser's to finish. */
function isGoing(item: BrowserDownload): boolean {
  return item.state === 'in_progress' || item.state === 'interrupted';
}

/** The row of a watched download, as the browser tells of it now. */
function rowOf(item: BrowserDownload, bytesPerSecond: number): WatchedRow {
  const url = item.finalUrl || item.url;
  const size = item.totalBytes !== undefined && item.totalBytes > 0 ? item.totalBytes : undefined;
  return {
    downloadId: item.id,
    name: nameOf(item),
    url,
    host: hostOf(url),
    received: item.bytesReceived ?? 0,
    ...(size !== undefined && { size }),
    bytesPerSecond,
    state: item.state === 'interrupted' ? 'resuming' : item.paused === true ? 'paused' : 'downloading',
  };
}

/** The file's name: the browser's path without its folder, or the URL's last part until the browser has one. */
function nameOf(item: BrowserDownload): string {
  const base = item.filename?.split(/[\\/]/).pop();
  if (base) return base;
  try {
    const url = new URL(item.finalUrl || item.url);
    const last = url.pathname.split('/').pop();
    return last ? decodeURIComponent(last) : url.host;
  } catch {
    return item.url;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

function sampleOf(item: BrowserDownload, at: number): DownloadSample {
  return {
    at,
    state: item.state ?? 'in_progress',
    bytesReceived: item.bytesReceived ?? 0,
    paused: item.paused === true,
    canResume: item.canResume === true,
    error: item.error,
  };
}
