import type { BrowserApi } from '../browser-api';
import type { SettingsStore } from '../settings-store';

const KEY = 'bypass-next';
/** "The next download" means one soon: an armed bypass forgotten for this long lapses. */
const NEXT_FOR_MS = 5 * 60_000;

/**
 * Leaving downloads to the browser on request: the next one Stitch would take (armed from the
 * popup, kept in storage so a worker restart does not lose it), or every one from a site (an
 * entry in the settings' excluded sites, which the options page shows and can undo).
 */
export class Bypass {
  /** URLs Stitch itself asked the browser to download: never taken over. */
  private readonly handed = new Set<string>();

  constructor(
    private readonly api: BrowserApi,
    private readonly settings: SettingsStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether the next download is left to the browser. */
  async nextArmed(): Promise<boolean> {
    const until = await this.api.storage.get(KEY);
    return typeof until === 'number' && until > this.now();
  }

  async setNext(armed: boolean): Promise<void> {
    if (armed) await this.api.storage.set(KEY, this.now() + NEXT_FOR_MS);
    else await this.api.storage.remove(KEY);
  }

  /**
   * Has the browser download `url` itself. Chromium's onCreated does not always say the
   * download was the extension's (byExtensionId), so the URL is remembered for takeNext.
   */
  async browserDownload(api: BrowserApi, url: string): Promise<void> {
    this.handed.add(url);
    try {
      await api.downloads.download({ url, conflictAction: 'uniquify' });
    } catch (error) {
      this.handed.delete(url);
      throw error;
    }
  }

  /** True once for a download to leave: one Stitch handed to the browser, or the next when armed. */
  async takeNext(url: string): Promise<boolean> {
    if (this.handed.delete(url)) return true;
    if (!(await this.nextArmed())) return false;
    await this.api.storage.remove(KEY);
    return true;
  }

  /** Leaves every download from `host` (and its subdomains) to the browser; returns the excluded sites. */
  async leaveSite(host: string): Promise<string[]> {
    const current = await this.settings.load();
    if (current.excludedSites.includes(host)) return current.excludedSites;
    const saved = await this.settings.save({ ...current, excludedSites: [...current.excludedSites, host] });
    return saved.excludedSites;
  }
}
