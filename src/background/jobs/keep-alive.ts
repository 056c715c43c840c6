import type { BrowserApi } from '../browser-api';

/** Chrome stops an idle worker after 30 s even mid-fetch; an API call resets that timer. */
export const KEEP_ALIVE_MS = 20_000;
/** Wakes a killed worker to resume unfinished jobs (Chrome's minimum period is 30 s). */
export const RESTORE_ALARM = 'stitch-restore';
const RESTORE_PERIOD_MINUTES = 0.5;

/**
 * Keeps the background alive only while jobs are active, and keeps an alarm set while any job
 * is unfinished so a worker that died anyway is woken to resume them.
 */
export class KeepAlive {
  private timer: ReturnType<typeof setInterval> | undefined;
  private alarmSet: boolean | undefined;

  constructor(private readonly api: BrowserApi) {}

  update(active: boolean, unfinished: boolean): void {
    if (active && !this.timer) {
      this.timer = setInterval(() => void this.api.runtime.ping().catch(() => {}), KEEP_ALIVE_MS);
    } else if (!active && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    if (unfinished !== this.alarmSet) {
      this.alarmSet = unfinished;
      void (unfinished ? this.api.alarms.create(RESTORE_ALARM, RESTORE_PERIOD_MINUTES) : this.api.alarms.clear(RESTORE_ALARM)).catch(
        () => {},
      );
    }
  }

  get active(): boolean {
    return this.timer !== undefined;
  }
}
