import { trustedFetch, type HttpFetch, type TrustScope } from '../../engine';
import { downloadFetch } from '../jobs/host-connections';

/**
 * The extension's one door: every request Stitch's background makes (a download's blocks, a
 * take-over probe, playlists, segments and keys, Metalink files, relink checks, aria2's RPC) is
 * sent by a requester made here, which applies the trust rules of `scope` to it and to every
 * redirect hop (request-trust.ts) over the browser's fetch with its hidden hops put back
 * (redirect-log.ts) and its connections shared (host-connections.ts). Lint refuses `fetch`
 * anywhere else (eslint.config.js).
 */
export function requester(scope: TrustScope): HttpFetch {
  return trustedFetch(downloadFetch, scope);
}
