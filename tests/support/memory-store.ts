import { normalizeRanges, removeRange, type ByteRange } from '../../src/engine/ranges';
import type { DownloadStore, JobStateRecord } from '../../src/engine/store';

const PAGE_BYTES = 64 * 1024;

interface MemoryJob {
  pages: Map<number, Uint8Array>;
  ranges: ByteRange[];
  state?: JobStateRecord;
}

/**
 * A DownloadStore in memory, for the engine's loop in virtual time (sim-network.ts): every call settles
 * in microtasks, without I/O, so the virtual clock sees when the engine has nothing left to do. Bytes
 * live in pages of 64 KiB; the stored ranges say which of their bytes count.
 */
export class MemoryStore implements DownloadStore {
  readonly blockSize = 256 * 1024;
  readonly writeConcurrency = 4;
  private readonly jobs = new Map<string, MemoryJob>();

  private job(jobId: string): MemoryJob {
    let job = this.jobs.get(jobId);
    if (!job) this.jobs.set(jobId, (job = { pages: new Map(), ranges: [] }));
    return job;
  }

  async writeBlock(jobId: string, offset: number, data: Uint8Array): Promise<void> {
    const job = this.job(jobId);
    for (let at = 0; at < data.length;) {
      const index = Math.floor((offset + at) / PAGE_BYTES);
      const within = offset + at - index * PAGE_BYTES;
      const n = Math.min(PAGE_BYTES - within, data.length - at);
      let page = job.pages.get(index);
      if (!page) job.pages.set(index, (page = new Uint8Array(PAGE_BYTES)));
      page.set(data.subarray(at, at + n), within);
      at += n;
    }
    if (data.length > 0) job.ranges = normalizeRanges([...job.ranges, { start: offset, end: offset + data.length }]);
  }

  async storedRanges(jobId: string): Promise<ByteRange[]> {
    return this.jobs.get(jobId)?.ranges.map((range) => ({ ...range })) ?? [];
  }

  async *read(jobId: string, start: number, end: number): AsyncIterable<Uint8Array> {
    const job = this.jobs.get(jobId);
    const stored = job?.ranges.some((range) => range.start <= start && end <= range.end) ?? false;
    if (!stored && end > start) throw new RangeError(`[${start}, ${end}) of ${jobId} is not stored`);
    for (let pos = start; pos < end;) {
      const index = Math.floor(pos / PAGE_BYTES);
      const within = pos - index * PAGE_BYTES;
      const n = Math.min(PAGE_BYTES - within, end - pos);
      yield job!.pages.get(index)!.slice(within, within + n);
      pos += n;
    }
  }

  async saveState(jobId: string, state: JobStateRecord): Promise<void> {
    this.job(jobId).state = structuredClone(state);
  }

  async loadState(jobId: string): Promise<JobStateRecord | undefined> {
    const state = this.jobs.get(jobId)?.state;
    return state === undefined ? undefined : structuredClone(state);
  }

  async listJobs(): Promise<string[]> {
    return [...this.jobs].filter(([, job]) => job.state !== undefined).map(([id]) => id);
  }

  async discardRange(jobId: string, start: number, end: number): Promise<void> {
    const job = this.jobs.get(jobId);
    if (job) job.ranges = removeRange(job.ranges, { start, end });
  }

  async clearBytes(jobId: string): Promise<void> {
    const job = this.jobs.get(jobId);
    if (job) [job.pages, job.ranges] = [new Map(), []];
  }

  async deleteJob(jobId: string): Promise<void> {
    this.jobs.delete(jobId);
  }
}
