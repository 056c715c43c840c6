import type { HttpFetch } from '../http/fetch-port';
import type { ExpectedIntegrity } from '../job-state';
import { toHexDigests } from '../integrity/expected';
import { bytesToHex } from '../integrity/digests';
import { sourceRefusal } from '../http/request-trust';
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
  // The mirrors come with this response's digest; a Metalink file's own hashes could be changed on an http path.
  const mirrorRefusal = (u: string) => sourceRefusal(u, url, { covered: true });
  const metalinkRefusal = (u: string) => sourceRefusal(u, url, { covered: false });
  const refused = [...mirrors.flatMap((u) => mirrorRefusal(u) ?? []), ...metalinks.flatMap((u) => metalinkRefusal(u) ?? [])];
  const hints = Object.fromEntries(found.mirrors.map((m) => [m.url, sourceHint(m.pri, m.geo)]));
  return {
    mirrors: mirrors.filter((u) => mirrorRefusal(u) === undefined),
    hints,
    metalinks: metalinks.filter((u) => metalinkRefusal(u) === undefined).slice(0, MAX_METALINKS),
    refused,
  };
}

/** A response may point to a few Metalink descriptions; each is a request. */
const MAX_METALINKS = 2;

/**
 * Sources and expected integrity of one Metalink file entry (the job keeps the first
 * MAX_SOURCES URLs). With the download's primary URL, the sources it may not use
 * (request-trust.ts) are left out, in `refused` with the reason: `covered` says whether digests
 * from an https source or the user cover the file already (the entry's own hashes count too).
 */
export function fromMetalinkFile(
  file: MetalinkFile,
  source = 'the Metalink file',
  trust?: { primaryUrl: string; covered: boolean },
): { urls: string[]; hints: Record<string, SourceHint>; expected: ExpectedIntegrity; refused: string[] } {
  const expected: ExpectedIntegrity = {
    size: file.size,
    digests: toHexDigests(file.hashes, source),
    pieces: file.pieces && {
      algorithm: file.pieces.algorithm,
      length: file.pieces.length,
      hashes: file.pieces.hashes.map(bytesToHex),
    },
  };
  const covered = trust !== undefined && (trust.covered || expected.digests.length > 0 || expected.pieces !== undefined);
  const refusal = (url: string) => trust && sourceRefusal(url, trust.primaryUrl, { covered });
  const urls = file.urls.map((u) => u.url);
  return {
    urls: urls.filter((u) => refusal(u) === undefined),
    hints: Object.fromEntries(file.urls.map((u) => [u.url, sourceHint(u.priority, u.location)])),
    expected,
    refused: urls.flatMap((u) => refusal(u) ?? []),
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
