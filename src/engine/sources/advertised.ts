import type { HttpFetch } from '../http/fetch-port';
import type { ExpectedIntegrity } from '../job-state';
import { toHexDigests } from '../integrity/expected';
import { bytesToHex } from '../integrity/digests';
import { advertisedRefusal } from '../http/request-trust';
import type { ResponseFacts } from '../http/response-facts';
import { fetchBoundedText, type TextLimits } from '../http/bounded-text';
import { duplicatesFromLink, METALINK_MEDIA_TYPE } from './link-header';
import { parseMetalink, type MetalinkFile } from './metalink';
import type { SourceHint } from './hrw';

/** A hint with only the fields a source gave. */
function sourceHint(priority: number | undefined, location: string | undefined): SourceHint {
  return { ...(priority === undefined ? {} : { priority }), ...(location === undefined ? {} : { location }) };
}

/**
 * Mirrors and Metalink descriptions the response to the user's `url` advertises in `Link` headers
 * (RFC 6249). As the RFC requires, duplicates count only when the response carries a whole-file
 * digest: without one, nothing ties the mirrors' bytes to this file. URLs the server may not
 * steer Stitch to (request-trust.ts) are left out, in `refused` with the reason.
 */
export function advertisedSources(
  facts: ResponseFacts,
  link: string | null,
  url: string,
): { mirrors: string[]; hints: Record<string, SourceHint>; metalinks: string[]; refused: string[] } {
  if (!link) return { mirrors: [], hints: {}, metalinks: [], refused: [] };
  const found = duplicatesFromLink([link], facts.url || url);
  const metalinks = found.describedBy.filter((d) => !d.type || d.type === METALINK_MEDIA_TYPE).map((d) => d.url);
  const mirrors = facts.digests.length > 0 ? found.mirrors.map((m) => m.url) : [];
  const refused = [...mirrors, ...metalinks].flatMap((u) => advertisedRefusal(u, url) ?? []);
  const allowed = (u: string) => advertisedRefusal(u, url) === undefined;
  const hints = Object.fromEntries(found.mirrors.map((m) => [m.url, sourceHint(m.pri, m.geo)]));
  return { mirrors: mirrors.filter(allowed), hints, metalinks: metalinks.filter(allowed).slice(0, MAX_METALINKS), refused };
}

/** A response may point to a few Metalink descriptions; each is a request. */
const MAX_METALINKS = 2;

/**
 * Sources and expected integrity of one Metalink file entry (the job keeps the first
 * MAX_SOURCES URLs). With the URL the user chose, the sources a server may not steer Stitch
 * to (request-trust.ts) are left out.
 */
export function fromMetalinkFile(
  file: MetalinkFile,
  source = 'the Metalink file',
  primaryUrl?: string,
): { urls: string[]; hints: Record<string, SourceHint>; expected: ExpectedIntegrity } {
  const urls = file.urls.map((u) => u.url);
  return {
    urls: primaryUrl === undefined ? urls : urls.filter((u) => advertisedRefusal(u, primaryUrl) === undefined),
    hints: Object.fromEntries(file.urls.map((u) => [u.url, sourceHint(u.priority, u.location)])),
    expected: {
      size: file.size,
      digests: toHexDigests(file.hashes, source),
      pieces: file.pieces && {
        algorithm: file.pieces.algorithm,
        length: file.pieces.length,
        hashes: file.pieces.hashes.map(bytesToHex),
      },
    },
  };
}

/** A Metalink description is read up to this size and for this long. */
export const METALINK_LIMITS: TextLimits = { maxBytes: 4 * 1024 * 1024, timeoutMs: 30_000 };

/** Fetches and parses a Metalink description; throws with a readable reason. */
export async function fetchMetalink(
  url: string,
  fetcher: HttpFetch,
  signal?: AbortSignal,
  limits = METALINK_LIMITS,
): Promise<MetalinkFile[]> {
  const { text, url: from } = await fetchBoundedText(url, `the Metalink file ${url}`, fetcher, limits, signal);
  const parsed = parseMetalink(text, from);
  if ('error' in parsed) throw new Error(`the Metalink file ${url} is invalid: ${parsed.error}`);
  return parsed.files;
}
