import { isLocalHost, parseHttpUrl } from '../../engine';
import type { BrowserApi } from '../browser-api';
import { RULE_PRIORITY, SessionRules, type RuleSpec } from './session-rules';

/**
 * The http(s) URLs whose host the engine's isLocalHost calls local, as declarativeNetRequest
 * regexFilters (RE2: no lookarounds), matched against URLs as the browser writes them: host in
 * lowercase, IPv4 in dotted decimal, IPv6 compressed in brackets (an embedded IPv4 address as two
 * hex groups). Browsers have no address ranges in their rules, so this is isLocalHost written as
 * patterns; a unit test holds the two to the same answers, address by address. A URL is local
 * when any of them matches: one pattern for all is over the memory limit Chrome sets a compiled
 * regexFilter (isRegexSupported says memoryLimitExceeded), so each is a rule of its own.
 */
export const LOCAL_URL_REGEXES: readonly string[] = (() => {
  // The first two octets of each local IPv4 range of /16 or wider, then two more.
  const ipv4 = [
    '(?:0|10|127|22[4-9]|2[3-5]\\d)\\.\\d+', // "this network" 0/8, private 10/8, loopback 127/8, multicast 224/4, reserved 240/4 and broadcast
    '100\\.(?:6[4-9]|[7-9]\\d|1[01]\\d|12[0-7])', // shared (CGNAT) 100.64/10
    '169\\.254', // link-local
    '172\\.(?:1[6-9]|2\\d|3[01])', // private 172.16/12
    '192\\.168', // private
    '198\\.1[89]', // benchmarking 198.18/15
  ];
  const ipv6 = [
    'f[cd][0-9a-f]{2}', // unique local fc00::/7
    'fe[89a-f][0-9a-f]', // link-local fe80::/10, site-local fec0::/10
    'ff[0-9a-f]{2}', // multicast ff00::/8
    '64:ff9b:1', // local-use NAT64 64:ff9b:1::/48
  ];
  // The same IPv4 ranges as the two hex groups of an IPv4 address inside an IPv6 one: the first
  // group for the ranges of /16 or wider, both for 192.0.0/24. A group is at most four digits in
  // a URL, so `+` stands for {1,4}, which costs more of the memory limit.
  const wide = [
    '[0-9a-f]{1,2}',
    'a[0-9a-f]{2}',
    '7f[0-9a-f]{2}',
    '[ef][0-9a-f]{3}',
    '64[4-7][0-9a-f]',
    'a9fe',
    'ac1[0-9a-f]',
    'c0a8',
    'c61[23]',
  ];
  const v4 = `(?:${wide.join('|')}):[0-9a-f]+|c000:[0-9a-f]{1,2}`;
  return [
    '(?:[^/?#@:]*\\.)?localhost\\.?',
    `(?:(?:${ipv4.join('|')})\\.\\d+|192\\.0\\.0)\\.\\d+`, // and IETF protocol assignments 192.0.0/24
    `\\[(?:${ipv6.join('|')}):[0-9a-f:]*\\]`,
    // ::/96 (unspecified, loopback, IPv4-compatible) and NAT64 64:ff9b::/96 around an IPv4
    // address in 0/8: the URL parser drops its zero first group into the "::".
    '\\[(?:64:ff9b)?::[0-9a-f]*\\]',
    `\\[::(?:ffff:)?(?:${v4})\\]`, // IPv4-compatible, IPv4-mapped
    `\\[64:ff9b::(?:${v4})\\]`, // NAT64
    // 6to4 2002::/16: the IPv4 address is the next two groups, a zero one written "0" or dropped into a "::".
    `\\[2002:(?:0?|(?:${wide.join('|')})|c000:(?:[0-9a-f]{1,2})?):[0-9a-f:]*\\]`,
  ].map((host) => `^https?://(?:[^/?#@]*@)?${host}(?::\\d+)?/`);
})();

/**
 * Stops Stitch's own requests to local addresses (loopback, private, link-local, shared, as the
 * engine's isLocalHost has them) in the browser, before they are sent: redirect hops included,
 * which fetch follows out of sight (an opaque redirect) when the engine cannot follow them by
 * hand. The engine refuses such a hop too, but only once the browser has sent it (see
 * trustedFetch); these rules make the refusal real. They are declarativeNetRequest session rules
 * (both browsers apply them to the extension's own requests), in place from the worker's start.
 *
 * A download whose primary is itself local may reach the local origins of its primary and
 * mirrors (the engine allows them): its owner (a running job, a take-over probe) holds an allow
 * rule of higher priority per origin while it needs it. The browser cannot tell which download a
 * request is for: while such a download runs, a public download's hidden redirect into its origin
 * passes the browser (and only the engine's check refuses it). A request the engine sends itself
 * after checking it (redirect: 'manual') is let through for its origin (redirect-log.ts): only
 * hops the engine cannot see are left to the block.
 *
 * The rules match only the extension's own background requests (initiated by its origin, from no
 * tab, of type xmlhttprequest: what both browsers call a background fetch), never the user's
 * browsing nor the downloads Stitch leaves to the browser.
 */
export class LocalNetworkRules {
  /** The local origins each owner lets Stitch reach. */
  private readonly holders = new Map<string, readonly string[]>();
  /** The extension's own origin as an initiator domain: its id in Chrome, its UUID in Firefox. */
  private readonly initiator: string;
  private anonymous = 0;
  private synced = false;

  /** `rules`: the extension's session rules, shared with the other concepts; its own when omitted. */
  constructor(
    api: BrowserApi,
    private readonly rules = new SessionRules(api),
  ) {
    this.initiator = new URL(api.extensionOrigin).host;
    rules.add(() => this.specs());
  }

  /**
   * Lets Stitch's requests reach the local origins among `primaryUrl` and `others` (its mirrors)
   * until `owner` releases them, when the primary is on a local address itself; otherwise
   * nothing is allowed. Resolves once the rules are in place, the block included: await it
   * before the first request.
   */
  allow(owner: string, primaryUrl: string, others: readonly string[] = []): Promise<void> {
    const origins = localOrigins(primaryUrl, others);
    if (origins.length === 0) return this.release(owner);
    const before = this.holders.get(owner);
    this.holders.set(owner, origins);
    return before?.join(' ') === origins.join(' ') ? this.settled() : this.sync();
  }

  release(owner: string): Promise<void> {
    return this.holders.delete(owner) ? this.sync() : this.settled();
  }

  /** Whether these rules let Stitch's requests reach `url`: it is not local, or a download holds its origin. */
  allows(url: string): boolean {
    const parsed = parseHttpUrl(url);
    if (!parsed || !isLocalHost(parsed.hostname)) return true;
    return [...this.holders.values()].some((origins) => origins.includes(parsed.origin));
  }

  /** Runs `task` (a mirror test, a New link check) with the local origins of `primaryUrl` allowed. */
  async during<T>(primaryUrl: string, others: readonly string[], task: () => Promise<T>): Promise<T> {
    const owner = `local:${++this.anonymous}`;
    try {
      await this.allow(owner, primaryUrl, others);
      return await task();
    } finally {
      void this.release(owner);
    }
  }

  private sync(): Promise<void> {
    this.synced = true;
    return this.rules.sync();
  }

  /** The updates queued so far; the first call puts the block rules in place. */
  private settled(): Promise<void> {
    return this.synced ? this.rules.settled() : this.sync();
  }

  private specs(): RuleSpec[] {
    const own = { initiatorDomains: [this.initiator], tabIds: [-1], resourceTypes: ['xmlhttprequest'] };
    const origins = new Set([...this.holders.values()].flat());
    return [
      ...LOCAL_URL_REGEXES.map((regexFilter) => ({
        priority: RULE_PRIORITY.localBlock,
        condition: { regexFilter, ...own },
        action: { type: 'block' },
      })),
      ...[...origins].map((origin) => ({
        priority: RULE_PRIORITY.localAllow,
        condition: { urlFilter: `|${origin}/`, ...own },
        action: { type: 'allow' },
      })),
    ];
  }
}

/** The origins of the URLs that are on local addresses, if the first (the primary) is; else none. */
export function localOrigins(primaryUrl: string, others: readonly string[]): string[] {
  const primary = parseHttpUrl(primaryUrl);
  if (!primary || !isLocalHost(primary.hostname)) return [];
  const origins = new Set([primary.origin]);
  for (const text of others) {
    const url = parseHttpUrl(text);
    if (url && isLocalHost(url.hostname)) origins.add(url.origin);
  }
  return [...origins];
}
