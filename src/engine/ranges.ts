/** A half-open byte range [start, end). */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** Sorts and merges touching or overlapping ranges; drops empty ones. */
export function normalizeRanges(ranges: Iterable<ByteRange>): ByteRange[] {
  const sorted = [...ranges].filter((r) => r.end > r.start).sort((a, b) => a.start - b.start);
  const merged: ByteRange[] = [];
  for (const r of sorted) {
    const last = merged[merged.length - 1];
    if (last && r.start <= last.end) {
      if (r.end > last.end) merged[merged.length - 1] = { start: last.start, end: r.end };
    } else {
      merged.push({ start: r.start, end: r.end });
    }
  }
  return merged;
}

/** The parts of [0, total) not covered by `have` (which must be normalized). */
export function missingRanges(have: readonly ByteRange[], total: number): ByteRange[] {
  const gaps: ByteRange[] = [];
  let cursor = 0;
  for (const r of have) {
    if (r.start > cursor) gaps.push({ start: cursor, end: Math.min(r.start, total) });
    cursor = Math.max(cursor, r.end);
    if (cursor >= total) break;
  }
  if (cursor < total) gaps.push({ start: cursor, end: total });
  return gaps.filter((g) => g.end > g.start);
}

/** Normalized `have` without the bytes of `cut`. */
export function removeRange(have: readonly ByteRange[], cut: ByteRange): ByteRange[] {
  return have.flatMap((r) =>
    r.end <= cut.start || r.start >= cut.end
      ? [r]
      : [
          { start: r.start, end: Math.max(r.start, cut.start) },
          { start: Math.min(r.end, cut.end), end: r.end },
        ].filter((piece) => piece.end > piece.start),
  );
}

/** Total number of bytes in normalized ranges. */
export function rangesLength(ranges: readonly ByteRange[]): number {
  return ranges.reduce((sum, r) => sum + (r.end - r.start), 0);
}

/** Length of the stored prefix starting at 0 (normalized input). */
export function contiguousPrefix(ranges: readonly ByteRange[]): number {
  const first = ranges[0];
  return first && first.start === 0 ? first.end : 0;
}
