import { realClock } from '../clock';
import type { HttpResponse } from './fetch-port';
import {
  type ContentRange,
  isIdentityEncoding,
  parseAcceptRanges,
  parseContentDisposition,
  parseContentLength,
  parseContentRange,
  parseETag,
  parseRetryAfter,
} from './headers';
import { parseLegacyDigest, parseReprDigest, type Digest } from '../integrity/digests';

/** The headers of one response that matter to a download, parsed once. */
export interface ResponseFacts {
  status: number;
  statusText: string;
  contentRange?: ContentRange;
  /** Content-Length, only meaningful for identity encoding. */
  contentLength?: number;
  identityEncoding: boolean;
  encoding?: string;
  /** Strong ETag only: a weak one cannot validate byte ranges. */
  etag?: string;
  lastModified?: string;
  acceptRanges?: 'bytes' | 'none';
  dispositionName?: string;
  contentType?: string;
  retryAfterMs?: number;
  /** Digests of the whole file (Repr-Digest, legacy Digest, or Content-Digest of a 200). */
  digests: Digest[];
  /** Raw Link header (mirrors and Metalink descriptions, RFC 6249). */
  link?: string;
  /** URL after redirects. */
  url: string;
}

export function readResponseFacts(response: HttpResponse, now = realClock.now()): ResponseFacts {
  const h = response.headers;
  const etag = parseETag(h.get('etag'));
  const identityEncoding = isIdentityEncoding(h.get('content-encoding'));
  return {
    status: response.status,
    statusText: response.statusText,
    contentRange: parseContentRange(h.get('content-range')),
    contentLength: identityEncoding ? parseContentLength(h.get('content-length')) : undefined,
    identityEncoding,
    encoding: h.get('content-encoding') ?? undefined,
    etag: etag && !etag.weak ? etag.raw : undefined,
    lastModified: h.get('last-modified')?.trim() || undefined,
    acceptRanges: parseAcceptRanges(h.get('accept-ranges')),
    dispositionName: parseContentDisposition(h.get('content-disposition')),
    contentType: h.get('content-type')?.split(';')[0]?.trim() || undefined,
    retryAfterMs: parseRetryAfter(h.get('retry-after'), now),
    digests: [
      ...(parseReprDigest(h.get('repr-digest')) ?? []),
      ...(parseLegacyDigest(h.get('digest')) ?? []),
      ...(response.status === 200 && identityEncoding ? (parseReprDigest(h.get('content-digest')) ?? []) : []),
    ],
    link: h.get('link') ?? undefined,
    url: response.url,
  };
}
