import type { ByteRange, DownloadJob } from '../../src/engine';
import { normalizeRanges } from '../../src/engine';

/** Follows a job's stored ranges through its events, so tests wait on bytes, not on sleeps. */
export class StoredWatch {
  private ranges: ByteRange[] = [];
  private waiters: Array<{ start: number; end: number; resolve: () => void }> = [];

  constructor(job: DownloadJob) {
    job.on('stored', (range) => {
      this.ranges = normalizeRanges([...this.ranges, range]);
      this.waiters = this.waiters.filter((w) => (this.covers(w.start, w.end) ? (w.resolve(), false) : true));
    });
  }

  covers(start: number, end: number): boolean {
    return this.ranges.some((r) => r.start <= start && r.end >= end);
  }

  /** Resolves once [start, end) is stored. */
  until(start: number, end: number): Promise<void> {
    if (this.covers(start, end)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ start, end, resolve }));
  }
}
