import { parseHttpUrl } from '../engine';
import type { BrowserApi, SessionRule } from './browser-api';

/**
 * Sets the Referer of Stitch's own requests for a download, which fetch cannot do in Chrome: its
 * extension worker drops a cross-origin `referrer` (Firefox's background page passes it on), and
 * servers with hotlink protection refuse the download (a take-over probe answered 403 leaves it
 * to the browser). One declarativeNetRequest session rule per (URL, Referer), held by its owners
 * (a take-over probe, a running job) and removed once none holds it. The rule matches only
 * requests from no tab (the extension's own), of type xmlhttprequest (what both browsers call
 * a background fetch), for exactly the download's URL: never mirrors, never the user's browsing.
 *
 * Session rules outlive a worker restart but not a browser restart, and carry no owner: the
 * browser's rules are made equal to what the holders want, so rules left by a previous worker
 * are removed by the first sync and running jobs add theirs again.
 */
export class ReferrerRules {
  private readonly holders = new Map<string, Wanted>();
  /** The sync not yet started (joined by later changes), and the last one queued. */
  private next: Promise<void> | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly api: BrowserApi) {}

  /**
   * Stitch's requests for `url` carry the Referer a browser sends from page `referrer` (see
   * refererValue) until `owner` releases it or holds another; resolves once the rule is in
   * place. Nothing to do without an http(s) referrer.
   */
  hold(owner: string, url: string, referrer: string | undefined): Promise<void> {
    const want = wanted(url, referrer);
    if (!want) return this.release(owner);
    const before = this.holders.get(owner);
    this.holders.set(owner, want);
    return before && keyOf(before) === keyOf(want) ? this.settled() : this.sync();
  }

  release(owner: string): Promise<void> {
    return this.holders.delete(owner) ? this.sync() : this.settled();
  }

  /**
   * Makes the session rules exactly those the holders want: adds the missing ones, removes the
   * others (stale ones of jobs gone since the last worker included). Never rejects: without the
   * rules a download still runs, only without its Referer.
   */
  sync(): Promise<void> {
    const rules = this.api.sessionRules;
    if (!rules) return Promise.resolve();
    if (!this.next) {
      const next = this.last
        .then(() => {
          this.next = undefined;
          return this.apply(rules);
        })
        .catch((error: unknown) => console.warn('Stitch: could not update the Referer rules', error));
      this.next = next;
      this.last = next;
    }
    return this.next;
  }

  /** Waits for the updates already queued (a hold that changes nothing must not race ahead of them). */
  private settled(): Promise<void> {
    return this.next ?? this.last;
  }

  private async apply(api: NonNullable<BrowserApi['sessionRules']>): Promise<void> {
    const want = new Map([...this.holders.values()].map((w) => [keyOf(w), w]));
    const current = await api.get();
    const kept = new Set<string>();
    const removeRuleIds: number[] = [];
    for (const rule of current) {
      const key = ruleKey(rule);
      if (key !== undefined && want.has(key) && !kept.has(key)) kept.add(key);
      else removeRuleIds.push(rule.id);
    }
    const taken = new Set(current.map((r) => r.id));
    let id = 0;
    const addRules: SessionRule[] = [];
    for (const [key, w] of want) {
      if (kept.has(key)) continue;
      while (taken.has(++id));
      addRules.push(refererRule(id, w));
    }
    if (removeRuleIds.length === 0 && addRules.length === 0) return;
    try {
      await api.update({ removeRuleIds, addRules });
    } catch (error) {
      // One rule the browser refuses must not keep the others out: apply them one by one.
      if (addRules.length + removeRuleIds.length <= 1) throw error;
      if (removeRuleIds.length > 0)
        await api.update({ removeRuleIds }).catch((e: unknown) => console.warn('Stitch: could not remove Referer rules', e));
      for (const rule of addRules) {
        await api
          .update({ addRules: [rule] })
          .catch((e: unknown) => console.warn(`Stitch: could not add the Referer rule for ${rule.condition.urlFilter}`, e));
      }
    }
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

const keyOf = (w: Wanted) => `${w.urlFilter}\n${w.referer}`;

/** The key of a rule this module made; undefined for anything else (removed by a sync). */
function ruleKey(rule: SessionRule): string | undefined {
  const header = rule.action.requestHeaders;
  if (rule.action.type !== 'modifyHeaders' || header?.length !== 1) return undefined;
  const [set] = header;
  if (set?.header.toLowerCase() !== 'referer' || set.operation !== 'set' || !set.value || !rule.condition.urlFilter) return undefined;
  const expected = refererRule(rule.id, { urlFilter: rule.condition.urlFilter, referer: set.value });
  // Made with another condition (another version): replace it. Only the fields set are compared,
  // since a browser may add its defaults to the rules it returns.
  const same = (['isUrlFilterCaseSensitive', 'tabIds', 'resourceTypes'] as const).every(
    (field) => JSON.stringify(rule.condition[field]) === JSON.stringify(expected.condition[field]),
  );
  return same ? keyOf({ urlFilter: rule.condition.urlFilter, referer: set.value }) : undefined;
}

export function refererRule(id: number, w: Wanted): SessionRule {
  return {
    id,
    priority: 1,
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
