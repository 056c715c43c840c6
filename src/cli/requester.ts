import { trustedFetch, type HttpFetch, type TrustScope } from '../engine';
import { nodeFetch } from './node-fetch';

/**
 * The command line's one door: every request `stitch` makes goes through a requester made here,
 * which applies the trust rules of `scope` (request-trust.ts) to it and to every redirect hop, over
 * the CLI's own client, which checks the address it actually connects to (http1-client.ts). Lint
 * refuses `fetch` and `node:net`/`node:tls`/`node:http(s)` anywhere else (eslint.config.js).
 */
export function requester(scope: TrustScope): HttpFetch {
  return trustedFetch(nodeFetch, scope);
}

/**
 * The raw client for the engine's jobs, which put every request of theirs through the door
 * themselves (jobOptions in engine/options.ts): a job's scope knows its mirrors and digests.
 */
export const enginePort: HttpFetch = nodeFetch;

/** The scope of a URL the user gave on the command line: no cookies, no Referer. */
export function userScope(url: string): TrustScope {
  return { primaryUrl: url, credentials: 'omit', credentialOrigins: [] };
}
