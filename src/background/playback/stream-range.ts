/**
 * What a media element's request for a job's stream URL asks for, and what to answer from the
 * bytes stored so far. Pure: the stream route does the I/O.
 */

/** A request: the whole file (no or an ignorable Range header), a byte range, or 416. */
export type RangeRequest = { kind: 'whole' } | { kind: 'range'; start: number; end: number } | { kind: 'unsatisfiable' };

/**
 * Parses a Range header against the file size (RFC 9110 §14). One `bytes=` range only; a
 * header that is malformed, multi-range or of another unit is ignored (the whole file is
 * answered), as servers may do. `end` is exclusive and clamped to the size.
 */
export function parseRangeHeader(header: string | null | undefined, size: number): RangeRequest {
  if (header === null || header === undefined) return { kind: 'whole' };
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    // Suffix: the last N bytes.
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', start: Math.max(0, size - suffix), end: size };
  }
  const start = Number(first);
  const lastPos = last === '' ? Infinity : Number(last);
  if (lastPos < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', start, end: Math.min(lastPos + 1, size) };
}

/**
 * What can be sent now of a request:
 * - `serve`: status 200 (no range: the whole file) or 206, with stored bytes [start, end): at
 *   most `maxChunk` of them, and only what is stored from `start` on (the stream route sends
 *   the rest piece by piece, asking again from `end`);
 * - `wait`: byte `start` is not stored yet; ask again when it is;
 * - `unsatisfiable`: 416.
 * With every byte "stored" it gives the status and range of the whole answer.
 */
export type StreamAnswer =
  { kind: 'serve'; status: 200 | 206; start: number; end: number } | { kind: 'wait'; start: number } | { kind: 'unsatisfiable' };

export function answerRange(request: RangeRequest, size: number, stored: readonly ByteRange[], maxChunk: number): StreamAnswer {
  if (request.kind === 'unsatisfiable') return request;
  const { start, end } = request.kind === 'whole' ? { start: 0, end: size } : request;
  const status = request.kind === 'whole' ? 200 : 206;
  if (start >= end) return { kind: 'serve', status, start, end }; // an empty file
  const run = storedRunAt(stored, start);
  if (!run) return { kind: 'wait', start };
  return { kind: 'serve', status, start, end: Math.min(end, run.end, start + maxChunk) };
}

/** The stored range holding byte `pos` (normalized ranges), if any. */
export function storedRunAt(stored: readonly ByteRange[], pos: number): ByteRange | undefined {
  return stored.find((r) => r.start <= pos && pos < r.end);
}

/** The first byte at or after `pos` that is not stored, or undefined when all up to `size` are. */
export function firstMissing(stored: readonly ByteRange[], pos: number, size: number): number | undefined {
  const end = storedRunAt(stored, pos)?.end ?? pos;
  return end < size ? end : undefined;
}

/** Response headers of an answer; `Content-Length` only when the whole body length is known. */
export function answerHeaders(answer: StreamAnswer, size: number, contentType: string): Record<string, string> {
  const common = { 'Accept-Ranges': 'bytes', 'Content-Type': contentType, 'Cache-Control': 'no-store' };
  if (answer.kind === 'unsatisfiable') return { ...common, 'Content-Range': `bytes */${size}`, 'Content-Length': '0' };
  if (answer.kind === 'wait') return common;
  const length = String(answer.end - answer.start);
  if (answer.status === 200) return { ...common, 'Content-Length': length };
  return { ...common, 'Content-Range': `bytes ${answer.start}-${answer.end - 1}/${size}`, 'Content-Length': length };
}
import type { ByteRange } from '../../engine';
