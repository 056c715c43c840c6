import { formatBytes } from './format-bytes';
import { openExchange, type Exchange } from './http/exchange';
import type { EngineOptions } from './options';
import { normalizeRanges, type ByteRange } from './ranges';
import { sampleRanges, validatorVerdict } from './relink-evidence';
import { ifRangeValidator, type RemoteFile } from './remote-file';
import { MirrorProblem } from './mirror-problem';
import { readAll } from './scheduler/loop/probe-bytes';
import type { DownloadStore } from './store';

export type RelinkVerdict =
  /** The new URL serves the same file: continue with the stored bytes; `file` has its validators. */
  | { same: true; file: RemoteFile }
  /**
   * It does not (or cannot be shown to): the stored bytes cannot be kept. `mismatch` says why as
   * data the pages put in the user's words; `reason` in the engine's English, for logs.
   */
  | { same: false; reason: string; mismatch: RelinkMismatch };

/** Why a new address does not serve the stored file. */
export type RelinkMismatch =
  /** This download's size was never known: nothing to match the stored part against. */
  | { kind: 'size-unknown' }
  /** The new address answered `status` instead of a part of the file. */
  | { kind: 'status'; status: number }
  /** It serves `size` bytes (undefined: it did not say), not the `expected`. */
  | { kind: 'size'; size?: number; expected: number }
  /** The same origin's ETag or date differs: another version. */
  | { kind: 'version' }
  /** It sends other bytes at offset `at` than the ones stored. */
  | { kind: 'bytes'; at: number };

export interface RelinkCheck {
  store: DownloadStore;
  jobId: string;
  /** What the job knows of the file from its old URL. */
  file: RemoteFile;
  /** The job's URL, whose answers gave `file` its validators. */
  knownUrl: string;
  newUrl: string;
  /** The job's options with the new URL's request rules (DownloadJob.optionsAt). */
  options: EngineOptions;
  signal: AbortSignal;
}

/**
 * Whether a new URL (an expired link renewed) serves the file whose bytes are stored: the same
 * size, and then the same strong ETag or Last-Modified when the new URL is on the old one's origin
 * and both give one (another server's validators prove nothing: relink-evidence.ts); otherwise the
 * same bytes in samples spread over everything stored. With trusted validators no stored byte is
 * fetched again: the one request asks for the first missing byte, which the download needs anyway.
 */
export async function checkRelink(check: RelinkCheck): Promise<RelinkVerdict> {
  const { file } = check;
  const stored = normalizeRanges(await check.store.storedRanges(check.jobId));
  if (file.size === undefined) {
    return differs({ kind: 'size-unknown' }, 'the size of the file was never known, so the stored part cannot be matched');
  }
  const firstMissing = stored[0]?.start === 0 ? stored[0].end : 0;
  const probeAt = Math.min(firstMissing, Math.max(0, file.size - 1));
  const probe = await ask(check, { start: probeAt, end: probeAt + 1 }, undefined);
  let next: RemoteFile;
  try {
    const facts = probe.facts;
    if (facts.status !== 206) {
      const reason = `the new address answered ${facts.status} ${facts.statusText} instead of sending part of the file`;
      return differs({ kind: 'status', status: facts.status }, reason);
    }
    const range = facts.contentRange;
    const size = range?.kind === 'bytes' ? range.total : undefined;
    if (size !== file.size) {
      const reason = `the new address serves ${size === undefined ? 'a file of unknown size' : formatBytes(size)}, not the ${formatBytes(file.size)} of this download`;
      return differs({ kind: 'size', size, expected: file.size }, reason);
    }
    // The download goes on with the new server's validators (for its If-Range), whatever showed the file is the same.
    next = { ...file, etag: facts.etag, lastModified: facts.lastModified };
    const validators = validatorVerdict({ ...file, url: check.knownUrl }, { ...next, url: check.newUrl });
    if (validators === 'differ') {
      return differs({ kind: 'version' }, 'the new address serves another version of the file (its ETag or date differs)');
    }
    if (validators === 'same' || stored.length === 0) return { same: true, file: next };
  } finally {
    await probe.close();
  }
  for (const range of sampleRanges(stored)) {
    // With If-Range, a file that changed since the first request answers 200, not other bytes.
    if (!(await sameBytes(check, range, ifRangeValidator(next)))) {
      const reason = `the new address sends other bytes at ${formatBytes(range.start)} than the ones stored`;
      return differs({ kind: 'bytes', at: range.start }, reason);
    }
  }
  return { same: true, file: next };
}

function differs(mismatch: RelinkMismatch, reason: string): RelinkVerdict {
  return { same: false, reason, mismatch };
}

function ask(check: RelinkCheck, range: ByteRange, validator: string | undefined): Promise<Exchange> {
  return openExchange(check.newUrl, { ...range, ranged: true }, validator, check.options, check.signal);
}

/** Fetches `range` from the new URL and compares it with the stored bytes (both small: see sampleRanges). */
async function sameBytes(check: RelinkCheck, range: ByteRange, validator: string | undefined): Promise<boolean> {
  const exchange = await ask(check, range, validator);
  try {
    const answered = exchange.facts.contentRange;
    if (exchange.facts.status !== 206 || answered?.kind !== 'bytes' || answered.start !== range.start) return false;
    // Copied chunk by chunk (a fetch may lend each chunk only until the next read, as the CLI's does).
    const remote = await readAll(exchange, range.end - range.start).catch((error: unknown) => {
      if (error instanceof MirrorProblem) return undefined; // more bytes than asked for: not the same
      throw error;
    });
    if (!remote) return false;
    const local = await collect(check.store.read(check.jobId, range.start, range.end), range.end - range.start);
    return remote.length === local.length && remote.every((byte, i) => byte === local[i]);
  } finally {
    await exchange.close();
  }
}

async function collect(chunks: AsyncIterable<Uint8Array>, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  let at = 0;
  for await (const chunk of chunks) {
    out.set(chunk.subarray(0, length - at), at);
    at += chunk.length;
    if (at >= length) break;
  }
  return out.subarray(0, Math.min(at, length));
}
