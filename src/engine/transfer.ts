import { isQuotaError } from './store';
import { contiguousPrefix, missingRanges, normalizeRanges, rangesLength, type ByteRange } from './ranges';
import { BlockWriter } from './block-writer';
import { DownloadError } from './errors';
import { formatBytes } from './format-bytes';
import { englishRestart, type RestartCause } from './notice';
import { checkResponse, type Ask } from './http/response-check';
import { openExchange, receiveBody, type Exchange } from './http/exchange';
import { RefusedResponse } from './http/fetch-port';
import type { ResponseFacts } from './http/response-facts';
import { ifRangeValidator, type RemoteFile } from './remote-file';
import { backoffDelay, sleep } from './retry';
import { describe, describeFile, gaveUp, storageFull, type TransferHost } from './transfer-host';

/**
 * Downloads every missing byte of the job from one URL. A broken or silent connection is
 * resumed with a Range request for exactly the missing bytes, validated with If-Range; a
 * failure before the first byte is retried with backoff up to a limit. Resolves when the
 * file is complete in the store; rejects with a DownloadError, or the signal's reason.
 */
export async function transferFromSource(host: TransferHost, signal: AbortSignal): Promise<void> {
  const { store, jobId, options } = host;
  let failuresInARow = 0;
  for (;;) {
    signal.throwIfAborted();
    const stored = normalizeRanges(await store.storedRanges(jobId));
    const ask = nextAsk(host.file, stored);
    if (!ask) return;
    if (!ask.ranged && stored.length > 0) {
      // The last transfer broke and the server cannot resume it.
      await restartOrFail(host, { kind: 'broke-no-resume' }, true, rangesLength(stored));
      continue;
    }
    const attempt = await attemptOnce(host, ask, rangesLength(stored), signal);
    const failure = attempt.failure;
    if (failure instanceof DownloadError && !failure.retryable) throw failure;
    if (failure instanceof RefusedResponse) throw new DownloadError('protocol', describe(failure));
    if (attempt.done || attempt.storedBytes > 0 || failure === undefined) {
      // Progress (or a deliberate restart): resume at once, however often it takes.
      failuresInARow = 0;
      continue;
    }
    failuresInARow++;
    if (failuresInARow >= options.maxAttemptsWithoutProgress) {
      throw gaveUp(failuresInARow, failure);
    }
    const asked = failure instanceof DownloadError ? failure.retryAfterMs : undefined;
    if (failure instanceof DownloadError && asked !== undefined && asked > options.maxRetryAfterMs) {
      const message = `${describe(failure)}, and asked to retry only after ${Math.round(asked / 1000)} s`;
      throw new DownloadError('http-status', message, false, undefined, failure.status);
    }
    await sleep(options.clock, asked ?? backoffDelay(failuresInARow - 1, options.retryBaseMs, options.retryMaxMs), signal);
  }
}

/** The next request: the first missing range, open-ended when it runs to the end. */
function nextAsk(file: RemoteFile | undefined, stored: ByteRange[]): Ask | undefined {
  if (!file) return { start: 0, ranged: true };
  if (file.size === undefined) return { start: contiguousPrefix(stored), ranged: file.acceptRanges };
  const gap = missingRanges(stored, file.size)[0];
  if (!gap) return undefined;
  if (!file.acceptRanges) return { start: 0, ranged: false };
  return { start: gap.start, end: gap.end === file.size ? undefined : gap.end, ranged: true };
}

interface AttemptResult {
  storedBytes: number;
  /** The response ended cleanly with everything it promised. */
  done: boolean;
  failure?: unknown;
}

async function attemptOnce(host: TransferHost, ask: Ask, storedBytes: number, signal: AbortSignal): Promise<AttemptResult> {
  const writer = new BlockWriter(host.store, host.jobId, undefined, (start, end) => host.stored(start, end));
  let exchange: Exchange | undefined;
  try {
    exchange = await openExchange(host.url, ask, host.file && ifRangeValidator(host.file), host.options, signal);
    const body = await acceptResponse(host, ask, storedBytes, exchange.facts);
    if (!body) return { storedBytes: 0, done: false };
    const complete = await receiveBody(exchange, body, writer, (chunk) => host.received(chunk.length), host.options.rateLimiter);
    await writer.flush();
    if (complete && body.end === undefined) await host.setFile({ ...host.file!, size: writer.position });
    return { storedBytes: writer.stored, done: complete };
  } catch (caught) {
    let error: unknown = exchange?.signal.aborted ? exchange.signal.reason : caught;
    await writer.flush().catch((flushError: unknown) => {
      if (isQuotaError(flushError)) error = flushError;
    });
    if (signal.aborted) throw signal.reason;
    if (isQuotaError(error)) throw storageFull(writer.stored);
    if (error instanceof DownloadError && error.code === 'storage') throw error;
    return { storedBytes: writer.stored, done: false, failure: error };
  } finally {
    await exchange?.close();
  }
}

/** Checks the response; returns where its body goes, or undefined when it is not to be used. */
async function acceptResponse(
  host: TransferHost,
  ask: Ask,
  storedBytes: number,
  facts: ResponseFacts,
): Promise<{ start: number; end?: number } | undefined> {
  const verdict = checkResponse(facts, ask, host.file, storedBytes > 0);
  switch (verdict.kind) {
    case 'retry':
    case 'fatal':
      throw verdict.error;
    case 'restart': {
      const rangesWork = verdict.reason === 'changed';
      await restartOrFail(host, verdict.cause, !rangesWork, storedBytes, facts.contentLength);
      const size = facts.identityEncoding && facts.status === 200 ? facts.contentLength : undefined;
      // After a change, a 416 or 206 says little about the new file: learn it afresh.
      if (!rangesWork || verdict.bodyFromZero) {
        await host.setFile(describeFile(host, facts, size, rangesWork && facts.acceptRanges === 'bytes'));
      }
      return verdict.bodyFromZero ? { start: 0, end: size } : undefined;
    }
    case 'body': {
      const ranges = facts.status === 206 || (facts.acceptRanges === 'bytes' && facts.identityEncoding);
      const size = verdict.size ?? host.file?.size;
      if (!host.file) await host.setFile(describeFile(host, facts, size, ranges));
      else if (host.file.size === undefined && size !== undefined) await host.setFile({ ...host.file, size });
      return { start: verdict.start, end: verdict.end };
    }
  }
}

/**
 * Restarts from zero when the policy allows: always when the file changed; when ranges do not
 * work, only if nothing is stored yet or the file is small enough to fetch again (of a file of
 * unknown size, what is stored already says how much at least would be fetched again).
 */
async function restartOrFail(
  host: TransferHost,
  cause: RestartCause,
  rangesBroken: boolean,
  storedBytes: number,
  announcedSize?: number,
): Promise<void> {
  const size = host.file?.size ?? announcedSize;
  const cost = size ?? storedBytes;
  if (rangesBroken && storedBytes > 0 && cost > host.options.maxRestartBytes) {
    const what = size === undefined ? `after ${formatBytes(storedBytes)} of a file of unknown size` : `at ${formatBytes(size)}`;
    throw new DownloadError('no-ranges', `${englishRestart(cause)}; ${what} the file is too large to download again from the start`);
  }
  await host.restart(cause, rangesBroken ? 'no-ranges' : 'changed');
}
