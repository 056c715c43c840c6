import { missingRanges, normalizeRanges, type ByteRange } from '../../ranges';

/** Request boundaries fall on multiples of this, so store records line up. */
export const ALIGN = 64 * 1024;

/** Which bytes of the file are stored, and which unclaimed range to fetch next. */
export class Plan {
  private stored: ByteRange[];

  constructor(
    readonly size: number,
    stored: ByteRange[],
  ) {
    this.stored = normalizeRanges(stored);
  }

  addStored(start: number, end: number): void {
    this.stored = normalizeRanges([...this.stored, { start, end }]);
  }

  /** Forgets [start, end): its bytes failed a check and must be fetched again. */
  discard(start: number, end: number): void {
    const kept: ByteRange[] = [];
    for (const r of this.stored) {
      if (r.start < start) kept.push({ start: r.start, end: Math.min(r.end, start) });
      if (r.end > end) kept.push({ start: Math.max(r.start, end), end: r.end });
    }
    this.stored = normalizeRanges(kept);
  }

  isComplete(): boolean {
    return missingRanges(this.stored, this.size).length === 0;
  }

  /** True when [start, end) is entirely stored. */
  covers(start: number, end: number): boolean {
    return this.stored.some((r) => r.start <= start && r.end >= end);
  }

  /** The first byte at or after `from` that is not stored (the size when all are). */
  firstMissing(from: number): number {
    const run = this.stored.find((r) => r.start <= from && r.end > from);
    return Math.min(this.size, run ? run.end : from);
  }

  /** Bytes neither stored nor claimed by a request in flight. */
  unclaimed(claims: Iterable<ByteRange>): ByteRange[] {
    return missingRanges(normalizeRanges([...this.stored, ...claims]), this.size);
  }

  /**
   * The next block to fetch: up to `maxBytes` from the first unclaimed range at or after
   * `from` (wrapping to the start), ending on an aligned boundary unless the range ends first.
   */
  nextBlock(claims: Iterable<ByteRange>, maxBytes: number, from = 0): ByteRange | undefined {
    const gaps = this.unclaimed(claims);
    const gap = gaps.find((g) => g.end > from) ?? gaps[0];
    if (!gap) return undefined;
    const start = gap.end > from ? Math.max(gap.start, from) : gap.start;
    let end = Math.min(gap.end, start + Math.max(1, Math.floor(maxBytes)));
    if (end < gap.end) {
      const aligned = Math.floor(end / ALIGN) * ALIGN;
      if (aligned > start) end = aligned;
    }
    return { start, end };
  }
}
