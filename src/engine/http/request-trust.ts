import type { HttpFetch, HttpRequest, HttpResponse } from './fetch-port';
import { MirrorProblem } from '../mirror-problem';

/**
 * What each request of a download may carry, and where servers may send Stitch. The user chose
 * one URL (the primary); everything else (advertised mirrors, redirects) is chosen by servers, so
 * it gets no cookies and no Referer unless the user allowed that origin, and cannot point Stitch
 * into loopback or private networks unless the primary is in one itself.
 */
export interface TrustScope {
  /** The URL the user chose. */
  primaryUrl: string;
  /** Credentials mode for the primary's origin and for `credentialOrigins`. */
  credentials: RequestCredentials;
  /** Further origins the user allowed credentials for (an options-page mirror rule). */
  credentialOrigins: readonly string[];
  /** The page the download came from; sent to the primary's origin only. */
  referrer?: string;
}

export interface RequestPolicy {
  credentials: RequestCredentials;
  /** '' sends no Referer at all. */
  referrer?: string;
}

/** Redirect hops followed per request, as browsers do. */
const MAX_REDIRECTS = 20;
/** URLs that answered with a redirect fetch may not show (a browser's opaque redirect). */
const MAX_REMEMBERED_REDIRECTS = 64;

/** The credentials and referrer of one request to `url`. */
export function requestPolicy(url: string, scope: TrustScope): RequestPolicy {
  const origin = originOf(url);
  if (origin !== undefined && origin === originOf(scope.primaryUrl)) return { credentials: scope.credentials, referrer: scope.referrer };
  if (origin !== undefined && scope.credentialOrigins.includes(origin)) return { credentials: scope.credentials, referrer: '' };
  return { credentials: 'omit', referrer: '' };
}

/**
 * Why a source of the file (a mirror a server advertised, a Metalink file's URL, a mirror the
 * user gave) may not be used for a download whose primary is `primaryUrl`, or undefined when it
 * may:
 * - only http(s);
 * - no loopback, private or link-local host unless the primary is on one too (a public server
 *   must not steer requests into the user's network). Hosts are judged by name: a public name
 *   that resolves to a private address is not caught here;
 * - no plain http for an https primary unless `covered`: digests or piece hashes from an https
 *   source (or the user) cover every byte it serves. Otherwise anyone on its path could splice
 *   bytes into the https download (the first bytes and the size are all a mirror check sees).
 */
export function sourceRefusal(url: string, primaryUrl: string, { covered }: { covered: boolean }): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a URL`;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `${url} is not an http:// or https:// address`;
  if (isLocalHost(parsed.hostname) && !isLocalUrl(primaryUrl)) {
    return `${url} is on a local or private network address, and the download is not`;
  }
  return covered ? undefined : plainHttpRefusal(url, primaryUrl);
}

/** Why `url` may not serve an https download without digests covering its bytes (see sourceRefusal). */
export function plainHttpRefusal(url: string, primaryUrl: string): string | undefined {
  if (!url.startsWith('http:') || !primaryUrl.startsWith('https:')) return undefined;
  return `${url} is plain http and the download is https; without a digest of the file, bytes from it could be changed on the way`;
}

/**
 * `fetch` for one download: every request, and every redirect hop, is sent with the policy of its
 * own URL. Redirects are followed by hand (`redirect: 'manual'`) so each hop is checked before it
 * is requested: Node shows the 3xx and its Location. A browser hides them (an opaque redirect):
 * the request is then sent again following redirects without any credentials or Referer, and where
 * it ended is checked before a byte of the body is read. A redirect into a local network from a
 * public address is refused either way (MirrorProblem: that mirror is dropped).
 */
export function trustedFetch(fetcher: HttpFetch, scope: TrustScope): HttpFetch {
  const opaque = new Set<string>();
  return async (input, init) => {
    let url = input;
    for (let hop = 0; ; hop++) {
      // Known to redirect out of sight: skip the request whose answer cannot be used.
      if (opaque.has(url)) return followBlind(fetcher, url, init, scope);
      const response = await fetcher(url, { ...init, ...requestPolicy(url, scope), redirect: 'manual' });
      if (response.type === 'opaqueredirect') {
        if (opaque.size >= MAX_REMEMBERED_REDIRECTS) opaque.clear();
        opaque.add(url);
        return followBlind(fetcher, url, init, scope);
      }
      const location = isRedirect(response.status) ? response.headers.get('location') : null;
      if (location === null) return response;
      await response.body?.cancel().catch(() => {});
      if (hop >= MAX_REDIRECTS) throw new MirrorProblem(`${url} redirected more than ${MAX_REDIRECTS} times`, 'redirect');
      const next = resolve(location, url);
      if (next === undefined) throw new MirrorProblem(`${url} redirected to "${location}", which is not a URL`, 'redirect');
      refuseRedirect(url, next, scope);
      url = next;
    }
  };
}

/** Follows redirects fetch does not show, with nothing to leak, and checks where they ended. */
async function followBlind(fetcher: HttpFetch, url: string, init: HttpRequest | undefined, scope: TrustScope): Promise<HttpResponse> {
  const response = await fetcher(url, { ...init, credentials: 'omit', referrer: '', redirect: 'follow' });
  try {
    if (response.url && response.url !== url) refuseRedirect(url, response.url, scope);
  } catch (error) {
    await response.body?.cancel().catch(() => {});
    throw error;
  }
  return response;
}

/**
 * A redirect may not cross from a public address into a local network, nor leave http(s). (The
 * server itself chose the hop, over https when it was asked so: the http check is not applied.)
 */
function refuseRedirect(from: string, to: string, scope: TrustScope): void {
  const refusal = sourceRefusal(to, isLocalUrl(from) ? from : scope.primaryUrl, { covered: true });
  if (refusal) throw new MirrorProblem(`${from} redirected to ${refusal}`, 'redirect');
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** `location` against `base`, or undefined when it is not a URL (URL.parse needs Chrome 126). */
function resolve(location: string, base: string): string | undefined {
  try {
    return new URL(location, base).href;
  } catch {
    return undefined;
  }
}

function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

function isLocalUrl(url: string): boolean {
  try {
    return isLocalHost(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * Loopback, private, link-local, unspecified or shared (CGNAT) addresses, and `localhost` names.
 * `hostname` is as the URL parser leaves it: IPv4 in dotted decimal, IPv6 compressed in brackets.
 */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.startsWith('[')) return isLocalIpv6(host.slice(1, -1));
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  return v4 !== null && isLocalIpv4(v4.slice(1).map(Number));
}

function isLocalIpv4([a, b]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! < 128) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! < 32) ||
    (a === 192 && b === 168)
  );
}

function isLocalIpv6(address: string): boolean {
  const groups = expandIpv6(address);
  if (!groups) return false;
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7]! <= 1) return true; // :: and ::1
  // IPv4-mapped (::ffff:a.b.c.d, which the parser writes as ::ffff:xxxx:xxxx).
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return isLocalIpv4([groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff]);
  }
  const first = groups[0]!;
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80; // unique local fc00::/7, link-local fe80::/10
}

/** The eight 16-bit groups of a compressed IPv6 address (no embedded IPv4: the URL parser rewrites it). */
function expandIpv6(address: string): number[] | undefined {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  const groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
