import { isLocalHost, parseHttpUrl, RefusedResponse, sourceRefusal, type HttpFetch, type HttpResponse } from '../../engine';
import type { ApiEvent, SeenRedirect } from '../browser-api';

/** Hops remembered: the newest this many, for this long. */
export const MAX_HOPS = 256;
export const MAX_HOP_AGE_MS = 60_000;
/**
 * How long an answer waits for its hop to be seen. The browser reports a redirect to the
 * extension apart from fetch's answer, a little before or after it: measured in the e2e
 * browsers, Chromium's onHeadersReceived came from 9 ms before to 28 ms after the fetch resolved
 * (mostly ±3 ms), Firefox's 1 to 5 ms after, and up to 250 ms after with 8 requests at once on
 * a busy machine. Waiting in vain costs this once per redirecting URL of a download (trustedFetch
 * then follows it blind without asking the log).
 */
export const HOP_WAIT_MS = 300;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Hops followed from one URL when looking for the one the browser stopped. */
const MAX_CHAIN = 20;

interface Hop {
  /** The request and the URL it was redirected from: onBeforeRedirect and the 3xx's headers tell one hop twice. */
  key: string;
  from: string;
  to: string;
  status: number;
  /** When the log heard of it (the log's clock). */
  at: number;
}

/**
 * The redirects the browser answered to Stitch's own requests, which fetch hides from the engine
 * (an opaque redirect): from which URL to which, for the last MAX_HOPS hops of the last
 * MAX_HOP_AGE_MS. Filled from webRequest (onBeforeRedirect, and a 3xx's Location), in both
 * browsers; read by `withRedirectLog`.
 */
export class RedirectLog {
  private hops: Hop[] = [];
  private readonly waiters = new Set<() => void>();
  private watching = false;
  /** Whether Stitch's requests may reach a URL (the local-network rules' allowances); see `watch`. */
  private reaches: (url: string) => boolean = (url) => !isLocalUrl(url);
  /** Runs a request the engine sent to a local URL with that URL's origin let through; see `watch`. */
  private letThrough: <T>(url: string, task: () => Promise<T>) => Promise<T> = (_url, task) => task();

  constructor(readonly now: () => number = () => performance.now()) {}

  /** Whether hops are being seen: without them, fetch is left as it is. */
  get listening(): boolean {
    return this.watching;
  }

  /**
   * Listens to `event` (register it before the background's first await). `rules.mayReach`:
   * whether the browser lets Stitch's requests reach a URL (LocalNetworkRules.allows; by default
   * any URL that is not local); `rules.letThrough`: runs a task with a local URL's origin allowed
   * (LocalNetworkRules.during).
   */
  watch(
    event: ApiEvent<(hop: SeenRedirect) => void> | undefined,
    rules?: { mayReach(url: string): boolean; letThrough<T>(url: string, task: () => Promise<T>): Promise<T> },
  ): void {
    if (!event) return;
    event.addListener((hop) => this.record(hop));
    if (rules) {
      this.reaches = (url) => rules.mayReach(url);
      this.letThrough = (url, task) => rules.letThrough(url, task);
    }
    this.watching = true;
  }

  mayReach(url: string): boolean {
    return this.reaches(url);
  }

  /** `task` (a request to `url`) with `url` let through when the browser's rules would stop it. */
  reach<T>(url: string, task: () => Promise<T>): Promise<T> {
    return this.mayReach(url) ? task() : this.letThrough(url, task);
  }

  /** A redirect seen by the browser; 3xx headers without a usable Location are no hop. */
  record(seen: SeenRedirect): void {
    const from = normalize(seen.url);
    const to = seen.redirectUrl ?? (REDIRECT_STATUSES.has(seen.statusCode) && seen.location ? resolve(seen.location, seen.url) : undefined);
    if (from === undefined || to === undefined) return;
    const key = `${seen.requestId} ${from}`;
    const status = REDIRECT_STATUSES.has(seen.statusCode) ? seen.statusCode : 302;
    const known = this.hops.find((hop) => hop.key === key);
    if (known) {
      // onBeforeRedirect's URL is where the browser went: it wins over the header's.
      if (seen.redirectUrl !== undefined) known.to = normalize(seen.redirectUrl) ?? known.to;
    } else {
      this.hops.push({ key, from, to: normalize(to) ?? to, status, at: this.now() });
    }
    this.prune();
    for (const waiter of [...this.waiters]) waiter();
  }

  /** The newest hop from `url` heard of at `since` or later. */
  hopFrom(url: string, since: number): { to: string; status: number } | undefined {
    const from = normalize(url);
    this.prune();
    for (let i = this.hops.length - 1; i >= 0; i--) {
      const hop = this.hops[i]!;
      if (hop.at < since) break;
      if (hop.from === from) return { to: hop.to, status: hop.status };
    }
    return undefined;
  }

  /** The hops heard of since `since` on the way from `url`, nearest first. */
  chainFrom(url: string, since: number): { from: string; to: string }[] {
    this.prune();
    const recent = this.hops.filter((hop) => hop.at >= since);
    const chain: { from: string; to: string }[] = [];
    const visited = new Set<string>();
    let frontier = [normalize(url) ?? url];
    while (frontier.length > 0 && chain.length < MAX_CHAIN) {
      const next: string[] = [];
      for (const from of frontier) {
        if (visited.has(from)) continue;
        visited.add(from);
        for (const hop of recent) {
          if (hop.from !== from || chain.length >= MAX_CHAIN) continue;
          chain.push({ from: hop.from, to: hop.to });
          next.push(hop.to);
        }
      }
      frontier = next;
    }
    return chain;
  }

  /** `find()`'s answer as soon as it has one, re-asked at each hop heard of; undefined after `ms`. */
  waitFor<T>(find: () => T | undefined, ms: number): Promise<T | undefined> {
    const found = find();
    if (found !== undefined || ms <= 0) return Promise.resolve(found);
    return new Promise((settle) => {
      const done = (value: T | undefined) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle(value);
      };
      const check = () => {
        const value = find();
        if (value !== undefined) done(value);
      };
      const timer = setTimeout(() => done(undefined), ms);
      this.waiters.add(check);
    });
  }

  private prune(): void {
    const oldest = this.now() - MAX_HOP_AGE_MS;
    const first = this.hops.findIndex((hop) => hop.at >= oldest);
    const drop = first === -1 ? this.hops.length : Math.max(first, this.hops.length - MAX_HOPS);
    if (drop > 0) this.hops = this.hops.slice(drop);
  }
}

/**
 * `fetch` with the hops a browser hides from it put back, for trustedFetch to judge (one place:
 * every request of a download, of a take-over probe, of a mirror test and of a New link check
 * goes through it):
 * - an opaque redirect (`redirect: 'manual'`) whose hop the log has heard of is answered as Node
 *   answers: its 3xx with a Location. trustedFetch then checks the hop before it is sent and
 *   follows it by hand, each hop with the rules of its own URL, as in the CLI;
 * - a request that follows redirects (trustedFetch's blind follow, when the hop was not heard of
 *   in time) and fails as a network error, where the log shows a hop on its way into a local
 *   address the browser stops Stitch from reaching (local-network-rules.ts), fails with
 *   RefusedResponse naming that hop: the source is given up at once, not retried as a network
 *   error for a minute. So does a request to such an address itself.
 * Without a log that listens (the CLI, tests), it is `fetcher` as it is.
 */
export function withRedirectLog(fetcher: HttpFetch, log: RedirectLog, waitMs = HOP_WAIT_MS): HttpFetch {
  return async (url, init) => {
    if (!log.listening) return fetcher(url, init);
    const since = log.now();
    let response: HttpResponse;
    try {
      // A request the door checked and allowed onto the local network (a local download's own
      // origins, its redirect to another local origin, a LAN mirror the user chose) and that follows
      // no redirect goes only there: the browser's block is for hops the engine cannot see, so it
      // is let through for its own origin. Nothing else lifts the block.
      const checked = init?.redirect === 'manual' && init.localNetwork === 'allow';
      response = await (checked ? log.reach(url, () => fetcher(url, init)) : fetcher(url, init));
    } catch (error) {
      // A browser's fetch fails with a TypeError for any network error, the blocked request included.
      if (!(error instanceof TypeError)) throw error;
      if (!log.mayReach(url)) throw new RefusedResponse(stoppedRequest(url));
      if (init?.redirect === 'manual' || init?.redirect === 'error') throw error;
      const refusal = await log.waitFor(() => stoppedHop(log.chainFrom(url, since), log), waitMs);
      throw refusal === undefined ? error : new RefusedResponse(refusal);
    }
    if (response.type !== 'opaqueredirect') return response;
    const hop = await log.waitFor(() => log.hopFrom(url, since), waitMs);
    return hop ? redirectResponse(url, hop.to, hop.status) : response;
  };
}

/**
 * A request the browser stopped at its own URL: a local address no download holds, reached by a
 * hop the engine could not check first (a blind follow).
 */
function stoppedRequest(url: string): string {
  return `${url} is on a local or private network address other than the download's own, where Stitch's requests are stopped`;
}

/**
 * The first hop of `chain` into a local address the browser stops: in the engine's words when it
 * refuses the hop too (from a public address), else saying the browser stops it.
 */
function stoppedHop(chain: readonly { from: string; to: string }[], log: RedirectLog): string | undefined {
  const hop = chain.find(({ to }) => !log.mayReach(to));
  return hop && `${hop.from} redirected to ${sourceRefusal(hop.to, hop.from, { covered: true }) ?? stoppedRequest(hop.to)}`;
}

/** A redirect as Node's fetch shows it with `redirect: 'manual'`: the status and Location, no body. */
function redirectResponse(url: string, location: string, status: number): HttpResponse {
  return {
    status,
    statusText: '',
    ok: false,
    url,
    type: 'default',
    headers: { get: (name) => (name.toLowerCase() === 'location' ? location : null) },
    body: null,
  };
}

/** `url` as the browser writes it in webRequest (no fragment), or undefined when it is not an http(s) URL. */
function normalize(url: string): string | undefined {
  const parsed = parseHttpUrl(url);
  if (!parsed) return undefined;
  parsed.hash = '';
  return parsed.href;
}

/** `location` against `base` (any scheme: trustedFetch refuses what is not http(s), saying so). */
function resolve(location: string, base: string): string | undefined {
  try {
    return new URL(location, base).href;
  } catch {
    return undefined;
  }
}

function isLocalUrl(url: string): boolean {
  const parsed = parseHttpUrl(url);
  return parsed !== undefined && isLocalHost(parsed.hostname);
}

/** The log of Stitch's background (watched by startBackground). */
export const redirectLog = new RedirectLog();

/** The fetch of Stitch's downloads in the browser: the global one (late-bound, tests patch it), with the log's hops. */
export const backgroundFetch: HttpFetch = withRedirectLog((url, init) => fetch(url, init), redirectLog);
