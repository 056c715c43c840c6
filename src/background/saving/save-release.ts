import { normalizeRanges, type ByteRange } from '../../engine';
import { CHUNK_BYTES } from '../../storage/opfs-chunks';

/** A store that can give back the space of a job's bytes before an offset (OpfsStore). */
export interface Releasing {
  releaseBefore(jobId: string, offset: number): Promise<number>;
  storedRanges(jobId: string): Promise<ByteRange[]>;
}

export function canRelease(store: object): store is Releasing {
  return typeof (store as Partial<Releasing>).releaseBefore === 'function';
}

interface Released {
  /** Bytes before this were deleted from the store after the browser's download had written them. */
  upTo: number;
  /** The save that handed them is still under way (or ended with every byte handed over). */
  live: boolean;
}

/**
 * Release-behind for streamed saves (Chrome): as the browser's download writes a job's bytes, the
 * store's chunks behind them are deleted, so the disk holds about one copy of the file. The bound:
 * bytes the save handed over AND the browser reports written (downloads' bytesReceived), and
 * never bytes the engine is reading (a hash of the stored prefix in flight).
 *
 * While the save that has them lives, the released bytes still count as stored for the engine
 * (claimed): they are in the browser's file, and the job's verification asks that the stored
 * ranges make up the file. Once that save ends without the file they are orphaned: no longer
 * claimed, so the engine, started again, fetches them like any missing bytes, and a new save
 * refuses to start over bytes that are gone (it would wait for them forever). Nothing of this is
 * kept across a worker restart: the store's own record (which forgot them first) is the truth.
 */
export class ReleaseBehind {
  private readonly released = new Map<string, Released>();
  /** Where each engine read in flight is now: bytes from there on are needed. */
  private readonly reads = new Map<string, Set<{ pos: number }>>();
  private readonly busy = new Set<string>();
  private store: Releasing | undefined;

  constructor(private readonly step = CHUNK_BYTES) {}

  /** The store the engine writes to, if it can release. */
  use(store: object): void {
    if (canRelease(store)) this.store = store;
  }

  /** The engine's view of the stored ranges: the store's, plus bytes a live save released. */
  claimed(jobId: string, ranges: ByteRange[]): ByteRange[] {
    const released = this.released.get(jobId);
    return released?.live ? normalizeRanges([...ranges, { start: 0, end: released.upTo }]) : ranges;
  }

  /** Bytes released behind a save that ended without the file, not stored again yet; 0 if none. */
  orphaned(jobId: string): number {
    const released = this.released.get(jobId);
    return released && !released.live ? released.upTo : 0;
  }

  /** An engine read of [start, …) is under way; returns where it is, to move on as it yields, and its end. */
  reading(jobId: string, start: number): { pos: number; done: () => void } {
    let reads = this.reads.get(jobId);
    if (!reads) this.reads.set(jobId, (reads = new Set()));
    const read = {
      pos: start,
      done: () => {
        reads.delete(read);
        if (reads.size === 0 && this.reads.get(jobId) === reads) this.reads.delete(jobId);
      },
    };
    reads.add(read);
    return read;
  }

  /**
   * The save of `jobId` handed the browser bytes up to `handed`, and the browser wrote `written`:
   * whole chunks behind both (and behind any engine read) go. One release per job at a time.
   */
  async behind(jobId: string, handed: number, written: number): Promise<void> {
    const store = this.store;
    let bound = Math.min(handed, written);
    for (const read of this.reads.get(jobId) ?? []) bound = Math.min(bound, read.pos);
    const target = Math.floor(bound / this.step) * this.step;
    const before = this.released.get(jobId);
    if (!store || this.busy.has(jobId) || target <= (before?.upTo ?? 0) || before?.live === false) return;
    this.busy.add(jobId);
    // Claimed before the store forgets them: the engine never sees a gap while the save lives.
    const claim: Released = { upTo: target, live: true };
    this.released.set(jobId, claim);
    try {
      claim.upTo = Math.max(before?.upTo ?? 0, await store.releaseBefore(jobId, target));
    } catch {
      // Which of its steps failed is unknown: the claim stays (the browser's file has the bytes).
    } finally {
      this.busy.delete(jobId);
      if (claim.upTo === 0 && this.released.get(jobId) === claim) this.released.delete(jobId);
    }
  }

  /** The save ended: with every byte handed over (its bytes stay claimed until the job's are cleared), or not. */
  ended(jobId: string, complete: boolean): void {
    const released = this.released.get(jobId);
    if (!released || complete) return;
    released.live = false;
    void this.stored(jobId, 0, released.upTo);
  }

  /** The engine stored [start, end): orphaned bytes stored again are no longer missing. */
  async stored(jobId: string, start: number, end: number): Promise<void> {
    const released = this.released.get(jobId);
    if (!released || released.live || start >= released.upTo || end <= start || !this.store) return;
    let pos = 0;
    for (const r of await this.store.storedRanges(jobId).catch(() => [])) if (r.start <= pos) pos = Math.max(pos, r.end);
    if (pos >= released.upTo && this.released.get(jobId) === released) this.released.delete(jobId);
  }

  /** The job's bytes were cleared or the job deleted. */
  forget(jobId: string): void {
    this.released.delete(jobId);
  }
}
