import { DownloadError } from '../errors';
import { fileChange, type RemoteFile } from '../remote-file';
import type { RestartCause } from '../notice';
import type { ResponseFacts } from './response-facts';

/** What was asked: bytes [start, end) of the file, with or without a Range header. */
export interface Ask {
  start: number;
  /** Exclusive end; undefined means "to the end of the file". */
  end?: number;
  ranged: boolean;
}

/** What to do with a response, decided before a byte of its body is stored. */
export type Verdict =
  /** Store the body at [start, end); `size` is the file size this response implies. */
  | { kind: 'body'; start: number; end?: number; size?: number }
  /**
   * The stored bytes cannot be continued: the file changed, or ranges do not work.
   * `bodyFromZero` says whether this response's body is the whole file and can be used at once.
   */
  | { kind: 'restart'; reason: 'changed' | 'no-ranges' | 'encoding'; cause: RestartCause; bodyFromZero: boolean }
  | { kind: 'retry'; error: DownloadError }
  | { kind: 'fatal'; error: DownloadError };

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * Checks one response against what was asked and what is known of the file (`known` is
 * undefined before the first response). `hasStoredBytes` says whether a 200 would overwrite
 * bytes already stored.
 */
export function checkResponse(facts: ResponseFacts, ask: Ask, known: RemoteFile | undefined, hasStoredBytes: boolean): Verdict {
  const { status } = facts;
  if (RETRYABLE_STATUS.has(status) || (status >= 500 && status < 600)) {
    return {
      kind: 'retry',
      error: new DownloadError('http-status', `the server answered ${describeStatus(facts)}`, true, facts.retryAfterMs, status),
    };
  }
  if (status === 416 && ask.start === 0 && facts.contentRange?.kind === 'unsatisfied' && facts.contentRange.total === 0 && !known) {
    // "bytes=0-" of an empty file cannot be satisfied: the file is simply empty.
    return { kind: 'body', start: 0, end: 0, size: 0 };
  }
  if (status === 416 && ask.ranged) {
    return {
      kind: 'restart',
      reason: 'changed',
      cause: { kind: 'past-end' },
      bodyFromZero: false,
    };
  }
  if (status === 200) return checkFull(facts, ask, known, hasStoredBytes);
  if (status === 206) return checkPartial(facts, ask, known);
  return {
    kind: 'fatal',
    error: new DownloadError('http-status', `the server answered ${describeStatus(facts)}`, false, undefined, status),
  };
}

function checkFull(facts: ResponseFacts, ask: Ask, known: RemoteFile | undefined, hasStoredBytes: boolean): Verdict {
  const size = facts.identityEncoding ? facts.contentLength : undefined;
  const change = known && fileChange(known, { size, etag: facts.etag, lastModified: facts.lastModified });
  const wantedPart = ask.ranged && (ask.start > 0 || ask.end !== undefined);
  if (!hasStoredBytes && !wantedPart) return { kind: 'body', start: 0, end: size, size };
  if (change) return { kind: 'restart', reason: 'changed', cause: { kind: 'changed', change }, bodyFromZero: true };
  return {
    kind: 'restart',
    reason: 'no-ranges',
    cause: { kind: ask.ranged ? 'ranges-ignored' : 'no-resume' },
    bodyFromZero: true,
  };
}

function checkPartial(facts: ResponseFacts, ask: Ask, known: RemoteFile | undefined): Verdict {
  const range = facts.contentRange;
  if (!ask.ranged) return fatalRange('the server sent a partial response to a request for the whole file');
  if (!range || range.kind !== 'bytes') return fatalRange('the server sent a partial response without a valid Content-Range');
  if (!facts.identityEncoding) {
    return {
      kind: 'restart',
      reason: 'encoding',
      cause: { kind: 'encoding', encoding: facts.encoding ?? '' },
      bodyFromZero: false,
    };
  }
  const change = known && fileChange(known, { size: range.total, etag: facts.etag, lastModified: facts.lastModified });
  if (change) return { kind: 'restart', reason: 'changed', cause: { kind: 'changed', change }, bodyFromZero: false };
  const asked = `bytes ${ask.start}–${ask.end === undefined ? 'end' : ask.end - 1}`;
  const sent = `bytes ${range.start}–${range.end - 1}`;
  if (range.start !== ask.start || (ask.end !== undefined && range.end > ask.end)) {
    return fatalRange(`the server sent ${sent} when asked for ${asked}`);
  }
  if (facts.contentLength !== undefined && facts.contentLength !== range.end - range.start) {
    return {
      kind: 'fatal',
      error: new DownloadError(
        'bad-length',
        `the server's Content-Length (${facts.contentLength}) contradicts its Content-Range (${sent})`,
      ),
    };
  }
  return { kind: 'body', start: range.start, end: range.end, size: range.total };
}

function fatalRange(message: string): Verdict {
  return { kind: 'fatal', error: new DownloadError('bad-range', message) };
}

function describeStatus(facts: ResponseFacts): string {
  return `${facts.status}${facts.statusText ? ` ${facts.statusText}` : ''}`;
}
