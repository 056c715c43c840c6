import { DownloadError, type DownloadErrorCode } from '../../errors';
import { StallError } from '../../http/exchange';
import { RefusedResponse } from '../../http/fetch-port';
import type { DropReason } from '../../notice';
import { isQuotaError } from '../../store';
import { describe } from '../../transfer-host';
import { MirrorProblem } from '../../mirror-problem';
import { FallbackToStream, LOST, RestartAll, YIELDED } from '../loop/outcomes';

/** What a failed request means for the download. */
export type FailureVerdict =
  /** Nothing: the request was cut on purpose, or the run is already over. */
  | { kind: 'ignore' }
  /** The whole run ends with `error` (restart, fallback, full disk, fatal). */
  | { kind: 'fail'; error: unknown }
  /** This mirror is dropped; the download goes on with the others. `status`: what the server answered, if it did. */
  | { kind: 'drop'; why: DropReason; code: DownloadErrorCode; status?: number }
  /** Broken mid-body: the rest is requested again at once; a stalling mirror is benched. */
  | { kind: 'resume'; stalled: boolean }
  /**
   * Failed before any byte: back off (as the server asked, if it did) and try again. `status`:
   * the server answered (e.g. 429, 503) rather than the connection failing.
   */
  | { kind: 'retry'; retryAfterMs: number | undefined; status?: number };

/**
 * Classifies a failed request (paper 1: a reset mid-transfer is a switch, not an outage).
 * `progressed`: it had received bytes. `storageFull` builds the full-disk error.
 */
export function judgeFailure(
  error: unknown,
  progressed: boolean,
  maxRetryAfterMs: number,
  storageFull: () => DownloadError,
): FailureVerdict {
  if (error === LOST || error === YIELDED) return { kind: 'ignore' };
  if (error instanceof RestartAll || error instanceof FallbackToStream) return { kind: 'fail', error };
  if (isQuotaError(error)) return { kind: 'fail', error: storageFull() };
  if (error instanceof MirrorProblem) return { kind: 'drop', why: error.why, code: error.code };
  // Asking again gets the same answer: the mirror is given up at once, its stored bytes kept.
  if (error instanceof RefusedResponse)
    return { kind: 'drop', why: { kind: 'failed', failure: { code: 'protocol' }, message: describe(error) }, code: 'protocol' };
  if (error instanceof DownloadError && !error.retryable) return { kind: 'fail', error };
  if (progressed) return { kind: 'resume', stalled: error instanceof StallError };
  const retryAfterMs = error instanceof DownloadError ? error.retryAfterMs : undefined;
  const status = error instanceof DownloadError ? error.status : undefined;
  if (retryAfterMs !== undefined && retryAfterMs > maxRetryAfterMs) {
    return { kind: 'drop', why: { kind: 'retry-later', seconds: Math.round(retryAfterMs / 1000), status }, code: 'http-status', status };
  }
  return status === undefined ? { kind: 'retry', retryAfterMs } : { kind: 'retry', retryAfterMs, status };
}
