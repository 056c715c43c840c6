import {
  advertisedSources,
  parseContentDisposition,
  parseContentLength,
  parseContentRange,
  readResponseFacts,
  toHexDigests,
  trustedFetch,
  type HexDigest,
  type HttpFetch,
  type HttpResponse,
} from '../../engine';
import { requester } from '../network/requester';

export interface ProbeResult {
  /** HTTP status; 0 when the request failed before any answer. */
  status: number;
  statusText: string;
  /** Total size, from Content-Range (206) or Content-Length (200). */
  size?: number;
  contentType?: string;
  /** The server's name for the file (Content-Disposition), when it gives one. */
  filename?: string;
  /** Network error text when status is 0. */
  error?: string;
  /** The server names mirrors of the file (`Link: rel=duplicate` with a digest) or a Metalink describing it. */
  mirrorsAdvertised?: boolean;
  /** The server gives the whole file's digest (Repr-Digest, Digest). */
  digestAnnounced?: boolean;
  /**
   * What the answer announces, for a downloader other than the engine (which reads the answer itself):
   * the mirrors it names that the trust rules accept, and the whole file's digests.
   */
  announced?: { mirrors: string[]; digests: HexDigest[] };
}

const PROBE_TIMEOUT_MS = 15_000;

/**
 * Asks for the first byte of `url` as Stitch would download it (with the job's credentials, no
 * cache, redirects checked as the job checks them): tells whether a re-request works, how
 * large the file is and what the server names it. The body is not read.
 */
export async function probeUrl(url: string, init: TakeoverInit): Promise<ProbeResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('no answer within 15 s')), PROBE_TIMEOUT_MS);
  try {
    const response = await takeoverFetch(url, init)(url, { headers: { Range: 'bytes=0-0' }, cache: 'no-store', signal: controller.signal });
    await response.body?.cancel().catch(() => {});
    const range = response.status === 206 ? parseContentRange(response.headers.get('content-range')) : undefined;
    const size =
      range?.kind === 'bytes'
        ? range.total
        : response.status === 200
          ? parseContentLength(response.headers.get('content-length'))
          : undefined;
    return {
      status: response.status,
      statusText: response.statusText,
      size,
      contentType: response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() || undefined,
      filename: parseContentDisposition(response.headers.get('content-disposition')),
      ...sourcesAnnounced(response, url),
    };
  } catch (error) {
    return { status: 0, statusText: '', error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** Stitch's requests for `url` before it is a job's: as the job will ask (credentials, Referer, redirects checked). */
export function takeoverFetch(url: string, init: TakeoverInit): HttpFetch {
  const scope = { primaryUrl: url, credentials: init.credentials, credentialOrigins: [], referrer: init.referrer };
  return init.fetch ? trustedFetch(init.fetch, scope) : requester(scope, init.connections ?? 'own');
}

/**
 * A take-over's request: its credentials and Referer; `connections` 'shared' waits its turn with
 * the downloads (a measurement), 'own' does not (a probe); `fetch`, a port of a test's.
 */
interface TakeoverInit {
  referrer?: string;
  credentials: RequestCredentials;
  connections?: 'shared' | 'own';
  fetch?: HttpFetch;
}

/** What the answer announces beyond the file itself: Stitch takes such a download at once (take-or-watch.ts). */
function sourcesAnnounced(response: HttpResponse, url: string): Pick<ProbeResult, 'mirrorsAdvertised' | 'digestAnnounced' | 'announced'> {
  const facts = readResponseFacts(response);
  const advertised = advertisedSources(facts, facts.link ?? null, url);
  return {
    mirrorsAdvertised: advertised.mirrors.length > 0 || advertised.metalinks.length > 0,
    digestAnnounced: facts.digests.length > 0,
    announced: { mirrors: advertised.mirrors, digests: toHexDigests(facts.digests, 'the server') },
  };
}
