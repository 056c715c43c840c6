import type { BrowserApi } from '../browser-api';

/** The storage.local key of the fastest rate a download of Stitch's ran at, in bytes/s. */
export const STITCH_PACE_KEY = 'stitchPace';
/**
 * Stitch's own pace where nothing faster was seen: what it takes in (fetch, then store) in Chromium
 * on a shared 2-core machine, 60–80 MB/s (bench/profile-worker.ts, 2026-11-27; the browser alone
 * downloads 110–170 MB/s there).
 */
export const DEFAULT_STITCH_PACE = 60_000_000;
/** A faster rate is saved at most this often: a job's view changes several times a second. */
const SAVE_EVERY_MS = 10_000;

/**
 * How fast Stitch itself takes a download in on this machine, whatever the server: the fastest its
 * own downloads ran (their rate over a few seconds), and never below DEFAULT_STITCH_PACE. Kept in
 * storage.local. The start probe takes a download over only where Stitch could clearly beat the
 * browser at this pace (start-probe.ts).
 */
export class StitchPace {
  private fastest: number | undefined;
  private loading: Promise<number> | undefined;
  private savedAt = -Infinity;

  constructor(
    private readonly storage: BrowserApi['storage'],
    private readonly now: () => number = Date.now,
  ) {}

  /** In bytes/s. */
  async get(): Promise<number> {
    return Math.max(DEFAULT_STITCH_PACE, await this.load());
  }

  /** A download of Stitch's runs at `rate` bytes/s. */
  observe(rate: number): void {
    if (this.fastest === undefined) return void this.load().then(() => this.observe(rate));
    if (!(rate > this.fastest)) return;
    this.fastest = rate;
    if (this.now() - this.savedAt < SAVE_EVERY_MS) return;
    this.savedAt = this.now();
    void this.storage.set(STITCH_PACE_KEY, rate).catch(() => {});
  }

  private load(): Promise<number> {
    if (this.fastest !== undefined) return Promise.resolve(this.fastest);
    return (this.loading ??= this.storage
      .get(STITCH_PACE_KEY)
      .catch(() => undefined)
      .then((stored) => (this.fastest ??= typeof stored === 'number' && Number.isFinite(stored) ? stored : 0)));
  }
}
