import type { Segment } from '../../integrity/reverify';
import type { MirrorState } from './mirror-state';

/** Which mirror stored which bytes: to blame the right one for a bad piece or digest. */
export class Provenance {
  private entries: Array<{ start: number; end: number; mirror: MirrorState }> = [];

  add(start: number, end: number, mirror: MirrorState): void {
    this.entries.push({ start, end, mirror });
  }

  /** Mirrors that stored any byte of [start, end). */
  suppliers(start: number, end: number): Set<MirrorState> {
    return new Set(this.entries.filter((e) => e.start < end && e.end > start).map((e) => e.mirror));
  }

  /** Forgets [start, end): its bytes were discarded. */
  forget(start: number, end: number): void {
    this.entries = this.entries.filter((e) => e.end <= start || e.start >= end);
  }

  /** Removes and returns everything `mirror` stored. */
  takeFrom(mirror: MirrorState): Array<{ start: number; end: number }> {
    const taken = this.entries.filter((e) => e.mirror === mirror);
    this.entries = this.entries.filter((e) => e.mirror !== mirror);
    return taken;
  }

  /** Ranges mirrors other than the primary stored, merged per mirror, in file order. */
  mirrorSegments(): Segment[] {
    const segments: Segment[] = [];
    const sorted = this.entries.filter((e) => !e.mirror.isPrimary).sort((a, b) => a.start - b.start);
    for (const e of sorted) {
      const last = segments[segments.length - 1];
      if (last && last.mirror === e.mirror.url && last.end === e.start) last.end = e.end;
      else segments.push({ start: e.start, end: e.end, mirror: e.mirror.url });
    }
    return segments;
  }
}
