import { trustedFetch, type HttpFetch, type TrustScope } from '../../engine';
import { downloadFetch } from '../jobs/host-connections';
import { backgroundFetch } from './redirect-log';

/**
 * The extension's one door: every request Stitch's background makes (a download's blocks, a
 * take-over probe, playlists, segments and keys, Metalink files, relink checks, aria2's RPC) is
 * sent by a requester made here, which applies the trust rules of `scope` to it and to every
 * redirect hop (request-trust.ts) over the browser's fetch with its hidden hops put back
 * (redirect-log.ts) and, but for a take-over's probe, its connections shared (host-connections.ts).
 * Lint refuses `fetch` and the raw ports anywhere else (eslint.config.js).
 */
export function requester(scope: TrustScope, connections: 'shared' | 'own' = 'shared'): HttpFetch {
  // 'own': a take-over's one-byte probe, which must not wait behind the downloads' shared connections.
  return trustedFetch(connections === 'shared' ? downloadFetch : backgroundFetch, scope);
}

/**
 * The raw port for the engine's jobs, which put every request of theirs through the door
 * themselves (jobOptions in engine/options.ts): a job's scope knows its mirrors and digests.
 */
export const enginePort: HttpFetch = downloadFetch;
