import { t, type MessageKey } from '../../words/i18n';
import type { BrowserApi, BrowserDownload } from '../browser-api';
import { nextStep, startWatching, type DownloadSample, type RescueReason, type WatchState } from './watch-rescue';

/** How often watched downloads are looked at: a stall or break is acted on within this. */
export const WATCH_POLL_MS = 1_000;
/** The storage.local key of the watched downloads' ids: the watch outlives the service worker and the browser. */
export const WATCHED_KEY = 'watchedDownloads';

/** Why Stitch took a watched download over, in the user's words. */
const RESCUE_NOTICE: Record<RescueReason, MessageKey> = {
  'not-resumable': 'noticeRescuedNotResumable',
  'no-progress': 'noticeRescuedNoProgress',
  stalled: 'noticeRescuedStalled',
};

export interface WatcherDeps {
  api: Pick<BrowserApi, 'downloads' | 'storage'>;
  /** Takes the download over; `why` is told to the user. */
  rescue: (item: BrowserDownload, why: string) => Promise<unknown>;
  now?: () => number;
}

/**
 * Watches the downloads left with the browser and carries out watch-rescue.ts's steps. One timer
 * polls downloads.search while any download is watched, and none runs otherwise; in Chrome the
 * calls also keep the service worker awake while it watches.
 */
export class DownloadWatcher {
  private readonly watched = new Map<number, WatchState>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private polling = false;
  private readonly now: () => number;

  constructor(private readonly deps: WatcherDeps) {
    this.now = deps.now ?? Date.now;
  }

  watch(item: BrowserDownload): void {
    this.start(item);
    void this.save();
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
      if (item && !this.watched.has(item.id) && (item.state === 'in_progress' || item.state === 'interrupted')) this.start(item);
    }
    await this.save();
  }

  private start(item: BrowserDownload): void {
    this.watched.set(item.id, startWatching({ at: this.now(), bytesReceived: item.bytesReceived ?? 0 }));
    this.timer ??= setInterval(() => void this.poll(), WATCH_POLL_MS);
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
      if (this.watched.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    }
  }

  private async look(id: number): Promise<void> {
    const { downloads } = this.deps.api;
    const item = await downloads.search(id).catch(() => undefined);
    const state = this.watched.get(id);
    if (!item || !state) {
      this.watched.delete(id); // erased from the browser's list
      return;
    }
    const step = nextStep(state, sampleOf(item, this.now()));
    this.watched.set(id, step.state);
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
        this.watched.delete(id);
        await this.deps.rescue(item, t(RESCUE_NOTICE[step.action.reason])).catch((error: unknown) => {
          console.error('Stitch: rescue failed', error);
        });
        return;
      case 'forget':
        this.watched.delete(id);
        return;
      case 'wait':
        return;
    }
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
