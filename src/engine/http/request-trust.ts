import type { HttpFetch, HttpRequest, HttpResponse } from './fetch-port';
import { MirrorProblem } from '../mirror-problem';
import { isLocalHost } from './address-class';

export { isLocalHost };

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
  /**
   * Whether plain-http URLs may serve an https primary. Off (the default) for everything that is
   * not a file the engine checks against digests: streams, playlists, keys, Metalink files. A
   * download's job turns it on because its mirror set (mirror-set.ts) admits a plain-http mirror
   * only while digests cover it.
   */
  allowPlainHttp?: boolean;
  /** 'refuse': a redirect is an error, never followed (aria2's RPC: a token must not go elsewhere). */
  redirects?: 'follow' | 'refuse';
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
    refuseSource(input, scope);
    let url = input;
    for (let hop = 0; ; hop++) {
      // Known to redirect out of sight: skip the request whose answer cannot be used.
      if (opaque.has(url)) return followBlind(fetcher, url, init, scope);
      const response = await fetcher(url, {
        ...init,
        ...requestPolicy(url, scope),
        redirect: 'manual',
        localNetwork: localNetwork(url, scope),
      });
      if (response.type === 'opaqueredirect') {
        if (scope.redirects === 'refuse') throw new MirrorProblem(`${url} answered with a redirect, which is not followed`, 'redirect');
        if (opaque.size >= MAX_REMEMBERED_REDIRECTS) opaque.clear();
        opaque.add(url);
        return followBlind(fetcher, url, init, scope);
      }
      const location = isRedirect(response.status) ? response.headers.get('location') : null;
      if (location === null) return response;
      await response.body?.cancel().catch(() => {});
      if (scope.redirects === 'refuse') throw new MirrorProblem(`${url} redirected to "${location}", which is not followed`, 'redirect');
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
  const response = await fetcher(url, {
    ...init,
    credentials: 'omit',
    referrer: '',
    redirect: 'follow',
    localNetwork: localNetwork(url, scope),
  });
  try {
    if (response.url && response.url !== url) refuseRedirect(url, response.url, scope);
  } catch (error) {
    await response.body?.cancel().catch(() => {});
    throw error;
  }
  return response;
}

/**
 * The door's check of a URL it is asked to request (each hop is checked by refuseRedirect): only
 * http(s), no local address unless the download's own is local, and no plain http for an https
 * download unless the scope allows it. Whoever chose the URL (a playlist, a manifest, a mirror
 * list, a caller that forgot to check) cannot get past it.
 */
function refuseSource(url: string, scope: TrustScope): void {
  const refusal = sourceRefusal(url, scope.primaryUrl, { covered: scope.allowPlainHttp === true });
  if (refusal) throw new MirrorProblem(refusal, 'redirect');
}

/**
 * Whether the port may connect to a local address for `url`: when the download's own address is
 * local by name, or `url` is on the very host the user chose (whatever it resolves to: a name on
 * the user's own network is theirs to download from). Any other host chosen by a server, a
 * playlist or a manifest must resolve to a public address.
 */
function localNetwork(url: string, scope: TrustScope): 'allow' | 'refuse' {
  if (isLocalUrl(scope.primaryUrl)) return 'allow';
  return hostOf(url) !== undefined && hostOf(url) === hostOf(scope.primaryUrl) ? 'allow' : 'refuse';
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
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
