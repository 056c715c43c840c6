import type { SeenRequest } from '../browser-api';

const REMEMBER_MS = 120_000;

/**
 * Remembers the URLs of recent non-GET page and frame requests: a download that came from a
 * form POST cannot be replayed with a GET, so it stays with the browser.
 */
export class PostTracker {
  private readonly seen = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  observe(request: SeenRequest): void {
    if (request.method.toUpperCase() === 'GET') return;
    this.prune();
    this.seen.set(request.url, this.now());
  }

  wasPosted(...urls: (string | undefined)[]): boolean {
    this.prune();
    return urls.some((url) => url !== undefined && this.seen.has(url));
  }

  private prune(): void {
    const cutoff = this.now() - REMEMBER_MS;
    for (const [url, at] of this.seen) if (at < cutoff) this.seen.delete(url);
  }
}
