import { parseHttpUrl } from '../../engine';
import type { BrowserApi } from '../browser-api';
import { RULE_PRIORITY, SessionRules, type RuleSpec } from './session-rules';

/**
 * Sets the Referer of Stitch's own requests for a download, which fetch cannot do in Chrome: its
 * extension worker drops a cross-origin `referrer` (Firefox's background page passes it on), and
 * servers with hotlink protection refuse the download (a take-over probe answered 403 leaves it
 * to the browser). One declarativeNetRequest session rule per URL, held by its owners (a
 * take-over probe, a running job) and removed once none holds it. The rule matches only
 * requests from no tab (the extension's own), of type xmlhttprequest (what both browsers call
 * a background fetch), for exactly the download's URL: never mirrors, never the user's browsing.
 *
 * Owners of one URL with different Referers (the same file taken over from two pages) still
 * make one rule, with the Referer of the owner that has held it longest: a running download's
 * requests keep the Referer they started with, which the server has accepted, and a later
 * download of the same file uses it too until the first lets go; then the next oldest's applies.
 * (Two rules of equal priority for one URL would leave the choice to the browser.)
 */
export class ReferrerRules {
  /** In the order they were taken: a hold that changes an owner's Referer moves it to the end. */
  private readonly holders = new Map<string, Wanted>();

  /** `rules`: the extension's session rules, shared with the other concepts; its own when omitted. */
  constructor(
    api: BrowserApi,
    private readonly rules = new SessionRules(api),
  ) {
    rules.add(() => this.specs());
  }

  /**
   * Stitch's requests for `url` carry the Referer a browser sends from page `referrer` (see
   * refererValue) until `owner` releases it or holds another, unless an older owner holds
   * another Referer for the same URL; resolves once the rule is in place. Nothing to do without
   * an http(s) referrer.
   */
  hold(owner: string, url: string, referrer: string | undefined): Promise<void> {
    const want = wanted(url, referrer);
    if (!want) return this.release(owner);
    const before = this.holders.get(owner);
    if (before && before.urlFilter === want.urlFilter && before.referer === want.referer) return this.rules.settled();
    this.holders.delete(owner);
    this.holders.set(owner, want);
    return this.rules.sync();
  }

  release(owner: string): Promise<void> {
    return this.holders.delete(owner) ? this.rules.sync() : this.rules.settled();
  }

  /** Makes the browser's session rules what the holders want (rules of a previous worker go). */
  sync(): Promise<void> {
    return this.rules.sync();
  }

  /** One rule per URL, with the Referer of its oldest holder. */
  private specs(): RuleSpec[] {
    const byUrl = new Map<string, string>();
    for (const { urlFilter, referer } of this.holders.values()) if (!byUrl.has(urlFilter)) byUrl.set(urlFilter, referer);
    return [...byUrl].map(([urlFilter, referer]) => refererRule({ urlFilter, referer }));
  }
}

interface Wanted {
  urlFilter: string;
  referer: string;
}

/** The rule's filter and Referer for a download, or undefined when there is nothing to set. */
function wanted(url: string, referrer: string | undefined): Wanted | undefined {
  const urlFilter = urlFilterFor(url);
  const referer = refererValue(referrer, url);
  return urlFilter && referer ? { urlFilter, referer } : undefined;
}

export function refererRule(w: Wanted): RuleSpec {
  return {
    priority: RULE_PRIORITY.referer,
    condition: {
      urlFilter: w.urlFilter,
      isUrlFilterCaseSensitive: true,
      tabIds: [-1],
      resourceTypes: ['xmlhttprequest'],
    },
    action: { type: 'modifyHeaders', requestHeaders: [{ header: 'referer', operation: 'set', value: w.referer }] },
  };
}

/**
 * A urlFilter matching exactly `url` (as fetch sends it: no fragment), case-sensitively; or
 * undefined for anything but http(s). `|` anchors both ends. In the URL, `*`, `^` and `|` would
 * be filter syntax and cannot be escaped: each becomes `^`, which matches one separator
 * character (any of these three among them), so the filter stays exact but for them.
 */
export function urlFilterFor(url: string): string | undefined {
  const parsed = parseHttpUrl(url);
  if (!parsed) return undefined;
  parsed.hash = '';
  return `|${parsed.href.replace(/[*^|]/g, '^')}|`;
}

/**
 * The Referer a browser sends from page `referrer` to `url` under the default policy
 * (strict-origin-when-cross-origin): the page's URL to its own origin, only its origin to
 * another, nothing from https to plain http; never a fragment or credentials. Chrome reports the
 * referrer of a download already so reduced, Firefox the page's full URL: Stitch must not tell
 * a server more than the browser did. Undefined for anything but an http(s) page.
 */
export function refererValue(referrer: string | undefined, url: string): string | undefined {
  if (!referrer) return undefined;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined;
  }
  const page = parseHttpUrl(referrer);
  if (!page) return undefined;
  if (page.protocol === 'https:' && !trustworthy(target)) return undefined;
  if (page.origin !== target.origin) return `${page.origin}/`;
  page.hash = '';
  page.username = '';
  page.password = '';
  return page.href;
}

/** A "potentially trustworthy" URL: https, or http to the loopback. */
function trustworthy(url: URL): boolean {
  return url.protocol === 'https:' || /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(url.hostname) || url.hostname.endsWith('.localhost');
}
