import type { BrowserApi } from '../browser-api';

/** The storage.local key of the hosts measured capping each connection. */
export const CAPPED_HOSTS_KEY = 'cappedHosts';
/** Hosts remembered at most; the one measured longest ago is forgotten first. */
export const MAX_CAPPED_HOSTS = 200;

/**
 * Hosts the start probe (start-measure.ts) found capping each connection: Stitch's several
 * connections are faster there, so their downloads are taken at once, without measuring again.
 * Kept in storage.local, so it outlives the service worker and the browser; most recent first.
 */
export class CappedHosts {
  constructor(private readonly storage: BrowserApi['storage']) {}

  async has(host: string): Promise<boolean> {
    return (await this.list()).includes(host);
  }

  async remember(host: string): Promise<void> {
    const hosts = [host, ...(await this.list()).filter((h) => h !== host)].slice(0, MAX_CAPPED_HOSTS);
    await this.storage.set(CAPPED_HOSTS_KEY, hosts);
  }

  private async list(): Promise<string[]> {
    const stored = await this.storage.get(CAPPED_HOSTS_KEY).catch(() => undefined);
    return Array.isArray(stored) ? stored.filter((h): h is string => typeof h === 'string') : [];
  }
}
