/**
 * What shows that a new address (an expired link renewed) serves the file whose bytes are stored:
 * its validators when they may be trusted, else stored bytes compared with the new address's.
 */
import { sameOrigin } from './http/http-url';
import { normalizeRanges, rangesLength, type ByteRange } from './ranges';

/** What one address said of its file. */
export interface Validators {
  url: string;
  /** Strong ETag only. */
  etag?: string;
  lastModified?: string;
}

/**
 * Whether two addresses' validators show the same file: 'same' or 'differ' when both give a
 * comparable one, 'unknown' otherwise. They count only within one origin: nginx and Apache derive
 * both ETag and Last-Modified from the file's modification time and size, so another server's
 * different build of a fixed-size image (built at a fixed time, as reproducible builds are) can
 * give the very same ones.
 */
export function validatorVerdict(known: Validators, next: Validators): 'same' | 'differ' | 'unknown' {
  if (!sameOrigin(known.url, next.url)) return 'unknown';
  if (known.etag && next.etag) return known.etag === next.etag ? 'same' : 'differ';
  if (known.lastModified && next.lastModified) return known.lastModified === next.lastModified ? 'same' : 'differ';
  return 'unknown';
}

/** Samples compared at most, and bytes per sample: at most 288 KiB fetched again, in 9 requests. */
export const SAMPLE_COUNT = 9;
export const SAMPLE_BYTES = 32 * 1024;

/**
 * The stored bytes to fetch again from the new address and compare, when validators do not count:
 * `count` (at least 2) samples of up to `bytes` spread evenly over everything stored (counted in stored bytes,
 * so every stored range gets its share): the first and the last stored bytes, and evenly between
 * (with 9, the eighths). Two builds of one image often differ only inside, which the ends alone
 * miss. Each sample lies within one stored range; samples that would overlap are merged, so a
 * small store is compared whole.
 */
export function sampleRanges(stored: readonly ByteRange[], count = SAMPLE_COUNT, bytes = SAMPLE_BYTES): ByteRange[] {
  const ranges = normalizeRanges(stored);
  const total = rangesLength(ranges);
  if (total === 0) return [];
  const samples: ByteRange[] = [];
  for (let i = 0; i < count; i++) {
    const fraction = i / (count - 1);
    const { range, position } = locate(ranges, Math.round((total - 1) * fraction));
    // The window holds its byte at the same fraction of its length: the first sample starts at
    // the first stored byte, the last ends at the last one.
    const start = Math.max(range.start, Math.min(range.end - bytes, position - Math.round((bytes - 1) * fraction)));
    samples.push({ start, end: Math.min(range.end, start + bytes) });
  }
  return normalizeRanges(samples);
}

/** The stored range holding the `offset`-th stored byte, and that byte's position in the file. */
function locate(ranges: readonly ByteRange[], offset: number): { range: ByteRange; position: number } {
  let before = 0;
  for (const range of ranges) {
    const length = range.end - range.start;
    if (offset < before + length) return { range, position: range.start + offset - before };
    before += length;
  }
  throw new RangeError(`stored byte ${offset} is past the ${before} stored`);
}
