import { formatBytes } from './format-bytes';
import { openExchange, type Exchange } from './http/exchange';
import type { EngineOptions } from './options';
import { normalizeRanges, type ByteRange } from './ranges';
import type { RemoteFile } from './remote-file';
import { MirrorProblem } from './scheduler/outcomes';
import { readAll } from './scheduler/probe-bytes';
import type { DownloadStore } from './store';

/** Bytes compared at each end of what is stored, when the servers give no validators to compare. */
const SAMPLE_BYTES = 64 * 1024;

export type RelinkVerdict =
  /** The new URL serves the same file: continue with the stored bytes; `file` has its validators. */
  | { same: true; file: RemoteFile }
  /** It does not (or cannot be shown to), in plain words: the stored bytes cannot be kept. */
  | { same: false; reason: string };

export interface RelinkCheck {
  store: DownloadStore;
  jobId: string;
  /** What the job knows of the file from its old URL. */
  file: RemoteFile;
  newUrl: string;
  options: EngineOptions;
  signal: AbortSignal;
}

/**
 * Whether a new URL (an expired link renewed) serves the file whose bytes are stored: the same
 * size, and the same strong ETag or Last-Modified when both servers give one; without such
 * validators, the same first and last stored bytes. With validators no stored byte is fetched
 * again: the one request asks for the first missing byte, which the download needs anyway.
 */
export async function checkRelink(check: RelinkCheck): Promise<RelinkVerdict> {
  const { file } = check;
  const stored = normalizeRanges(await check.store.storedRanges(check.jobId));
  if (file.size === undefined) return { same: false, reason: 'the size of the file was never known, so the stored part cannot be matched' };
  const firstMissing = stored[0]?.start === 0 ? stored[0].end : 0;
  const probeAt = Math.min(firstMissing, Math.max(0, file.size - 1));
  const probe = await ask(check, probeAt, probeAt + 1);
  try {
    const facts = probe.facts;
    if (facts.status !== 206) {
      return { same: false, reason: `the new address answered ${facts.status} ${facts.statusText} instead of sending part of the file` };
    }
    const range = facts.contentRange;
    const size = range?.kind === 'bytes' ? range.total : undefined;
    if (size !== file.size) {
      return {
        same: false,
        reason: `the new address serves ${size === undefined ? 'a file of unknown size' : formatBytes(size)}, not the ${formatBytes(file.size)} of this download`,
      };
    }
    const next: RemoteFile = { ...file, etag: facts.etag, lastModified: facts.lastModified };
    const validators = validatorVerdict(file, facts);
    if (validators === 'differ')
      return { same: false, reason: 'the new address serves another version of the file (its ETag or date differs)' };
    if (validators === 'same' || stored.length === 0) return { same: true, file: next };
  } finally {
    await probe.close();
  }
  for (const range of samples(stored)) {
    if (!(await sameBytes(check, range))) {
      return { same: false, reason: `the new address sends other bytes at ${formatBytes(range.start)} than the ones stored` };
    }
  }
  return { same: true, file: { ...file, etag: undefined, lastModified: undefined } };
}

/** 'same' or 'differ' when both sides have a comparable validator; 'unknown' otherwise. */
function validatorVerdict(known: RemoteFile, next: { etag?: string; lastModified?: string }): 'same' | 'differ' | 'unknown' {
  if (known.etag && next.etag) return known.etag === next.etag ? 'same' : 'differ';
  if (known.lastModified && next.lastModified) return known.lastModified === next.lastModified ? 'same' : 'differ';
  return 'unknown';
}

/** The start of the first stored range and the end of the last one, up to SAMPLE_BYTES each. */
function samples(stored: ByteRange[]): ByteRange[] {
  const first = stored[0]!;
  const last = stored.at(-1)!;
  const head = { start: first.start, end: Math.min(first.end, first.start + SAMPLE_BYTES) };
  const tail = { start: Math.max(last.start, last.end - SAMPLE_BYTES), end: last.end };
  return tail.start >= head.end || last !== first ? [head, tail] : [head];
}

function ask(check: RelinkCheck, start: number, end: number): Promise<Exchange> {
  return openExchange(check.newUrl, { start, end, ranged: true }, undefined, check.options, check.signal);
}

/** Fetches `range` from the new URL and compares it with the stored bytes (both bounded by SAMPLE_BYTES). */
async function sameBytes(check: RelinkCheck, range: ByteRange): Promise<boolean> {
  const exchange = await ask(check, range.start, range.end);
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
