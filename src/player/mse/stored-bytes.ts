import type { ByteRange } from '../../engine';
import type { JobReader } from '../../storage/job-reader';
import { hopeless, type StateFeed } from '../state-feed';
import type { StoredReader } from './segments';

/** The download stopped for good while the player waited for its bytes. */
export class DownloadStopped extends Error {
  override readonly name = 'DownloadStopped';
}

/**
 * The job's bytes for the MSE route, read by the page straight from the extension's
 * IndexedDB. The page has the background's origin, so it opens the same database: bytes never
 * cross the messaging layer (Chrome serializes messages as JSON; Firefox would structured-clone
 * every piece), and Blob records are sliced without copying. Which bytes are stored comes from
 * the player port; while the player waits for bytes, it tells the background which byte it
 * needs, so the engine fetches them first.
 */
export class StoredBytes implements StoredReader {
  private waits = new AbortController();

  constructor(
    private readonly store: Pick<JobReader, 'read'>,
    private readonly jobId: string,
    readonly size: number,
    private readonly feed: StateFeed,
    private readonly needs: (position: number) => void,
  ) {}

  /** True when [start, end) is stored now. */
  has(start: number, end: number): boolean {
    return covers(this.feed.latest?.stored ?? [], start, Math.min(end, this.size));
  }

  /** The first byte at or after `pos` that is not stored (the size when all are). */
  nextGap(pos: number): number {
    return Math.min(this.size, firstGap(this.feed.latest?.stored ?? [], pos));
  }

  /**
   * Every read waiting for bytes rejects with `reason` (a seek makes them pointless), and so does
   * every read that would wait from now until `resume`: a read started after the seek for the old
   * position (the next await of a segment being read) would otherwise hold the seek until that
   * segment is stored.
   */
  interrupt(reason: unknown): void {
    this.waits.abort(reason);
  }

  /** Reads wait for their bytes again (the reader moved to where the player now is). */
  resume(): void {
    if (this.waits.signal.aborted) this.waits = new AbortController();
  }

  /** Bytes [start, end), once stored; `signal` ends this one wait (as `interrupt` ends all). */
  async read(start: number, end: number, signal?: AbortSignal): Promise<Uint8Array> {
    end = Math.min(end, this.size);
    if (start >= end) return new Uint8Array(0);
    await this.waitFor(start, end, signal);
    return this.copy(start, end);
  }

  async readAvailable(start: number, end: number): Promise<Uint8Array> {
    end = Math.min(end, this.size);
    if (start >= end) return new Uint8Array(0);
    await this.waitFor(start, start + 1);
    return this.copy(start, Math.min(end, firstGap(this.feed.latest?.stored ?? [], start)));
  }

  /** Resolves once [start, end) is stored, telling the background the first byte missing meanwhile. */
  private async waitFor(start: number, end: number, signal?: AbortSignal): Promise<void> {
    if (this.has(start, end)) return;
    const waits = signal ? AbortSignal.any([this.waits.signal, signal]) : this.waits.signal;
    if (waits.aborted) throw waits.reason;
    this.needs(firstGap(this.feed.latest?.stored ?? [], start));
    const state = await this.feed.until((s) => covers(s.stored, start, end) || hopeless(s), waits);
    if (!covers(state.stored, start, end)) throw new DownloadStopped('the download stopped');
  }

  /** One copy into a buffer of exactly the requested bytes (a Cluster or a fragment: small). */
  private async copy(start: number, end: number): Promise<Uint8Array> {
    const out = new Uint8Array(end - start);
    let at = 0;
    for await (const piece of this.store.read(this.jobId, start, end)) {
      out.set(piece, at);
      at += piece.length;
    }
    return out;
  }
}

function covers(stored: readonly ByteRange[], start: number, end: number): boolean {
  return stored.some((r) => r.start <= start && r.end >= end);
}

/** The first byte at or after `pos` that is not stored. */
function firstGap(stored: readonly ByteRange[], pos: number): number {
  return stored.find((r) => r.start <= pos && pos < r.end)?.end ?? pos;
}
