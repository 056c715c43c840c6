import type { DownloadStore } from './store';
import { DownloadError, type FailureFacts, type NetworkFailure } from './errors';
import { StallError } from './http/exchange';
import { RefusedResponse } from './http/fetch-port';
import { MirrorProblem } from './mirror-problem';
import { formatBytes } from './format-bytes';
import { filenameFromUrl, sanitizeFilename } from './http/headers';
import type { ResponseFacts } from './http/response-facts';
import type { JobNotice, RestartCause } from './notice';
import type { EngineOptions } from './options';
import type { RemoteFile } from './remote-file';
import type { ExpectedIntegrity } from './job-state';
import type { HexDigest, PieceHashes } from './integrity/expected';
import type { MirrorReport } from './scheduler/loop/mirror-state';
import type { Playback } from './scheduler/policies/views';
import type { SourceHint } from './sources/hrw';
import { toHexDigests } from './integrity/expected';

/** What a transfer (one stream or many mirrors) needs from its job: where bytes go and how to report. */
export interface TransferHost {
  readonly store: DownloadStore;
  readonly jobId: string;
  readonly url: string;
  readonly options: EngineOptions;
  file: RemoteFile | undefined;
  /** Persists what was learned about the file. */
  setFile(file: RemoteFile | undefined): Promise<void>;
  /** Forgets stored bytes and file facts; throws `code` when the job has restarted too often. */
  restart(cause: RestartCause, code: 'changed' | 'no-ranges'): Promise<void>;
  notice(notice: JobNotice): void;
  /** Body bytes received (for the rate), before they are stored. */
  received(bytes: number): void;
  /** Bytes [start, end) are stored: a write resolved and survives the process dying. */
  stored(start: number, end: number): void;
}

/** What the mirror scheduler needs beyond a single-source transfer: every URL of the file and more. */
export interface SchedulerHost extends TransferHost {
  /** The file's URLs, primary (the one the user asked for) first. */
  readonly sources: readonly string[];
  mirrorsChanged(reports: MirrorReport[]): void;
  /** Remembers more URLs of the file (from Link headers or a Metalink file); resolves with those kept (at most MAX_SOURCES in all). */
  addSources(urls: string[], hints?: Record<string, SourceHint>): Promise<string[]>;
  /** What the sources said about a URL's order, if anything. */
  sourceHint(url: string): SourceHint | undefined;
  /** Adds digests or piece hashes learned during the download. */
  addExpected(expected: ExpectedIntegrity): Promise<void>;
  /** Every digest known for the file so far. */
  knownDigests(): HexDigest[];
  /** Piece hashes known for the file (Metalink), if any. */
  expectedPieces(): PieceHashes | undefined;
  /** Stored bytes of [start, end) were discarded (they failed a hash). */
  discarded(start: number, end: number): void;
  /** While a player is attached: the byte it plays and how far ahead is urgent (the most recently moved player). */
  playback(): Playback | undefined;
  /** Every player's position, the most recently moved first (playback() is the first). */
  playbacks(): readonly Playback[];
}

/** The error for a full disk or quota; what was stored is kept. */
export function storageFull(keptBytes: number): DownloadError {
  return new DownloadError('storage-full', `the disk is full; ${formatBytes(keptBytes)} more were kept before it filled`);
}

/** What the first response tells about the file. */
export function describeFile(host: TransferHost, facts: ResponseFacts, size: number | undefined, acceptRanges: boolean): RemoteFile {
  const name = facts.dispositionName ?? filenameFromUrl(facts.url || host.url) ?? filenameFromUrl(host.url);
  return {
    size,
    etag: facts.etag,
    lastModified: facts.lastModified,
    acceptRanges: acceptRanges && facts.identityEncoding,
    filename: sanitizeFilename(name ?? 'download'),
    contentType: facts.contentType,
    digests: toHexDigests(facts.digests, 'the server'),
  };
}

/** The network failures fetch reports only as a code on its error's cause (Node's fetch), in plain words. */
const NETWORK_FAILURES: Record<string, { kind: NetworkFailure; words: string }> = {
  ECONNREFUSED: { kind: 'refused', words: 'the connection was refused' },
  ECONNRESET: { kind: 'reset', words: 'the connection was reset' },
  UND_ERR_SOCKET: { kind: 'closed', words: 'the server closed the connection' },
  EPIPE: { kind: 'closed', words: 'the server closed the connection' },
  ENOTFOUND: { kind: 'dns', words: 'the host name could not be resolved (DNS)' },
  EAI_AGAIN: { kind: 'dns', words: 'the host name could not be resolved (DNS)' },
  ETIMEDOUT: { kind: 'timeout', words: 'the connection timed out' },
  UND_ERR_CONNECT_TIMEOUT: { kind: 'timeout', words: 'the connection timed out' },
  EHOSTUNREACH: { kind: 'unreachable', words: 'the host is unreachable' },
  ENETUNREACH: { kind: 'unreachable', words: 'the network is unreachable' },
};

function networkFailure(error: Error): { kind: NetworkFailure; words: string } | undefined {
  const code = ((error as { cause?: unknown }).cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? NETWORK_FAILURES[code] : undefined;
}

/** An error in plain words, with its cause when that adds something. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error && cause.message !== error.message ? ` (${cause.message})` : '';
    return `${networkFailure(error)?.words ?? error.message}${detail}`;
  }
  return String(error);
}

/**
 * A failed request as data for the pages. A failure that is not the engine's own is the
 * connection's: a browser's fetch rejects with a bare TypeError whatever broke (refused, reset,
 * DNS), so only Node's codes tell more.
 */
export function failureFacts(error: unknown): FailureFacts {
  if (error instanceof DownloadError) return error.facts;
  if (error instanceof StallError) return { code: 'network', network: 'silent' };
  if (error instanceof RefusedResponse) return { code: 'protocol' };
  if (error instanceof MirrorProblem) return { code: error.code };
  return { code: 'network', network: (error instanceof Error && networkFailure(error)?.kind) || 'unreached' };
}

/** Giving up after `attempts` in a row that received nothing: the last failure's facts, and how many attempts. */
export function gaveUp(attempts: number, last: unknown): DownloadError {
  const { code, status, network } = failureFacts(last);
  const message = `gave up after ${attempts} attempts that received nothing; last: ${describe(last)}`;
  return new DownloadError(code, message, false, undefined, status, { network, attempts });
}
