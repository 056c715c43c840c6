import { t, type MessageKey } from '../pages-shared/i18n';
import type { BrowserApi, BrowserDownload } from './browser-api';
import { nextStep, startWatching, type DownloadSample, type RescueReason, type WatchState } from './watch-rescue';

/** How often watched downloads are looked at: a stall or break is acted on within this. */
export const WATCH_POLL_MS = 1_000;

/** Why Stitch took a watched download over, in the user's words. */
const RESCUE_NOTICE: Record<RescueReason, MessageKey> = {
  'not-resumable': 'noticeRescuedNotResumable',
  'no-progress': 'noticeRescuedNoProgress',
  stalled: 'noticeRescuedStalled',
};

export interface WatcherDeps {
  api: Pick<BrowserApi, 'downloads'>;
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
    this.watched.set(item.id, startWatching({ at: this.now(), bytesReceived: item.bytesReceived ?? 0 }));
    this.timer ??= setInterval(() => void this.poll(), WATCH_POLL_MS);
  }

  /** One look at every watched download: the timer's tick. */
  async poll(): Promise<void> {
    // A slow search must not pile polls up.
    if (this.polling) return;
    this.polling = true;
    try {
      await Promise.all([...this.watched.keys()].map((id) => this.look(id)));
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
