import type { ByteRange, DownloadStore } from '../../engine';
import { ReleaseBehind } from './save-release';

/** Bytes kept per streamed save, at most: blocks just stored that its stream will send next. */
const WINDOW_BYTES = 64 * 1024 * 1024;

interface Feed {
  /** Where the save's stream is: blocks before it are dropped, blocks past pos + window never kept. */
  pos: number;
  /** The save has taken or started reading every byte before this: they must not change any more. */
  claimed: number;
  /** Why bytes the save took are not the stored ones any more, once that happened. */
  spoiled?: string;
  blocks: Map<number, Uint8Array>;
  bytes: number;
}

/** A call of the store that changes a job's bytes [start, end), while it is in flight. */
interface Change {
  start: number;
  end: number;
  /** It forgets the bytes (discardRange, clearBytes, deleteJob) rather than writing new ones. */
  forgets: boolean;
  /** Another change of some of its bytes was in flight at the same time: which came last is unknown. */
  overlapped: boolean;
}

/**
 * Hands a streamed save the blocks the engine just stored, from memory, instead of reading them
 * back from the store: a read transaction waits behind every write transaction in flight, and
 * reading a Blob back costs a file read and a copy between processes. Only blocks within a
 * bounded window ahead of a save's position are kept (copied: the engine reuses its buffers);
 * anything else is read from the store as before.
 *
 * It also tells a save when bytes it took may no longer be the stored ones, so that what the
 * browser writes is always what the job's checks read. It sees every call that changes a job's
 * bytes (feeding() taps the engine's store) as it is made, not the job's events after it, so:
 * - a kept block is the bytes of a write with no other change of them in flight meanwhile and none
 *   made since (a later change drops it when it is called), so it is what the store holds;
 * - once the save took bytes (from memory, or started reading them from the store), forgetting any
 *   of them (a piece that failed its hash, a lying mirror's bytes fetched again, a restart), or
 *   reading them while they were being forgotten, spoils the save: the route fails its body and the
 *   browser's download is cancelled. Writing over stored bytes is not a change of them: the store
 *   asks that stored bytes be forgotten before different ones are written (DownloadStore.writeBlock),
 *   the rule the engine's own checks (hashing the stored prefix as it grows) rely on too.
 * Both cost a few comparisons per store call, where hashing what the save sent and the stored
 * file would cost two passes over every byte.
 *
 * And it gives the store's space back behind the browser's download (save-release.ts): the
 * engine's reads in flight and stored ranges pass through it for that.
 */
export class SaveFeed {
  private readonly feeds = new Map<string, Feed>();
  /** Each job's changes in flight, with or without a save. */
  private readonly changes = new Map<string, Set<Change>>();

  constructor(
    private readonly windowBytes = WINDOW_BYTES,
    readonly releases = new ReleaseBehind(),
  ) {}

  /**
   * A save of `jobId` streams from `pos` on; returns its end, told whether every byte was handed
   * over (released bytes stay claimed) or not (they are orphaned). One save per job at a time.
   */
  open(jobId: string, pos: number): (complete?: boolean) => void {
    const feed: Feed = { pos, claimed: pos, blocks: new Map(), bytes: 0 };
    this.feeds.set(jobId, feed);
    return (complete = false) => {
      if (this.feeds.get(jobId) !== feed) return;
      this.feeds.delete(jobId);
      this.releases.ended(jobId, complete);
    };
  }

  /**
   * The browser's download of the save of `jobId` has written `written` bytes: the store's whole
   * chunks behind them and behind what the save handed over go (see ReleaseBehind).
   */
  async written(jobId: string, written: number): Promise<void> {
    const feed = this.feeds.get(jobId);
    if (feed && !feed.spoiled) await this.releases.behind(jobId, feed.pos, written);
  }

  /** Why a save of `jobId` cannot start now (bytes an earlier save released are gone), or undefined. */
  unavailable(jobId: string): string | undefined {
    const orphaned = this.releases.orphaned(jobId);
    if (orphaned === 0) return undefined;
    return `the first ${orphaned} bytes went into an earlier save that did not finish; the download fetches them again`;
  }

  /** The save has sent everything before `pos`. */
  advance(jobId: string, pos: number): void {
    const feed = this.feeds.get(jobId);
    if (!feed) return;
    feed.pos = pos;
    for (const [offset, block] of feed.blocks) if (offset + block.length <= pos) this.drop(feed, offset);
  }

  /** Whether an open save would keep `length` bytes stored at `offset` now. */
  wants(jobId: string, offset: number, length: number): boolean {
    const feed = this.feeds.get(jobId);
    return !!feed && offset >= feed.pos && offset + length <= feed.pos + this.windowBytes && feed.bytes + length <= this.windowBytes;
  }

  /**
   * A write of `data` (the caller's copy) at `offset` resolved, no other change of those bytes in
   * flight meanwhile: the feed keeps it if its save still wants it.
   */
  stored(jobId: string, offset: number, data: Uint8Array): void {
    if (!this.wants(jobId, offset, data.length)) return;
    const feed = this.feeds.get(jobId)!;
    this.forgetCopies(jobId, offset, offset + data.length);
    feed.blocks.set(offset, data);
    feed.bytes += data.length;
  }

  /** Up to `max` kept bytes starting exactly at `pos`, or undefined; what it returns is no longer kept, and is the save's. */
  take(jobId: string, pos: number, max: number): Uint8Array | undefined {
    const feed = this.feeds.get(jobId);
    const block = feed?.blocks.get(pos);
    if (!feed || !block || max <= 0) return undefined;
    this.drop(feed, pos);
    const taken = block.length <= max ? block : block.subarray(0, max);
    if (taken !== block) {
      feed.blocks.set(pos + max, block.subarray(max));
      feed.bytes += block.length - max;
    }
    this.claim(jobId, feed, pos, pos + taken.length);
    return taken;
  }

  /** The save starts reading [start, end) from the store. */
  reading(jobId: string, start: number, end: number): void {
    const feed = this.feeds.get(jobId);
    if (feed) this.claim(jobId, feed, start, end);
  }

  /** Why what the save of `jobId` took is not what is stored any more, or undefined while it is. */
  spoiled(jobId: string): string | undefined {
    return this.feeds.get(jobId)?.spoiled;
  }

  /** `store`, telling this feed of every change of a job's bytes as it is called. */
  feeding<S extends DownloadStore>(store: S): S {
    this.releases.use(store);
    return new Proxy(store, {
      get: (target, property) => {
        if (property === 'storedRanges')
          return async (jobId: string): Promise<ByteRange[]> => this.releases.claimed(jobId, await target.storedRanges(jobId));
        if (property === 'read')
          return (jobId: string, start: number, end: number, scratch?: Uint8Array) => this.read(target, jobId, start, end, scratch);
        if (property === 'writeBlock')
          return async (jobId: string, offset: number, data: Uint8Array) => {
            const change = this.begin(jobId, offset, offset + data.length, false);
            // Copied before the write: the store may move `data` to its writer's thread.
            const copy = this.wants(jobId, offset, data.length) ? data.slice() : undefined;
            try {
              // What the store resolves with (a moved buffer handed back) goes on to the engine.
              const returned = await target.writeBlock(jobId, offset, data);
              if (copy && !change.overlapped) this.stored(jobId, offset, copy);
              void this.releases.stored(jobId, offset, offset + data.length);
              return returned;
            } finally {
              this.end(jobId, change);
            }
          };
        if (property === 'discardRange')
          return (jobId: string, start: number, end: number) =>
            this.forgetting(jobId, start, end, () => target.discardRange(jobId, start, end));
        if (property === 'clearBytes' || property === 'deleteJob')
          return (jobId: string) =>
            this.forgetting(jobId, 0, Infinity, async () => {
              await target[property](jobId);
              this.releases.forget(jobId);
            });
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** An engine read: bytes from where it is on are not released under it. */
  private async *read(store: DownloadStore, jobId: string, start: number, end: number, scratch?: Uint8Array): AsyncIterable<Uint8Array> {
    const read = this.releases.reading(jobId, start);
    try {
      for await (const chunk of store.read(jobId, start, end, scratch)) {
        yield chunk;
        read.pos += chunk.length;
      }
    } finally {
      read.done();
    }
  }

  /** A change of [start, end) is called: kept copies of those bytes go; a save that took some of them is spoiled if they go. */
  private begin(jobId: string, start: number, end: number, forgets: boolean): Change {
    const change: Change = { start, end, forgets, overlapped: false };
    let changes = this.changes.get(jobId);
    if (!changes) this.changes.set(jobId, (changes = new Set()));
    for (const other of changes) if (other.start < end && start < other.end) other.overlapped = change.overlapped = true;
    changes.add(change);
    this.forgetCopies(jobId, start, end);
    const feed = this.feeds.get(jobId);
    if (feed && forgets && start < feed.claimed) feed.spoiled ??= 'bytes already saved were replaced';
    return change;
  }

  private end(jobId: string, change: Change): void {
    const changes = this.changes.get(jobId);
    changes?.delete(change);
    if (changes?.size === 0) this.changes.delete(jobId);
  }

  private async forgetting(jobId: string, start: number, end: number, call: () => Promise<void>): Promise<void> {
    const change = this.begin(jobId, start, end, true);
    try {
      await call();
    } finally {
      this.end(jobId, change);
    }
  }

  /** The save takes [start, end): bytes being forgotten right now may be read as they were (or not at all). */
  private claim(jobId: string, feed: Feed, start: number, end: number): void {
    feed.claimed = Math.max(feed.claimed, end);
    for (const change of this.changes.get(jobId) ?? []) {
      if (change.forgets && change.start < end && start < change.end) feed.spoiled ??= 'bytes being saved were replaced';
    }
  }

  /** Kept copies of [start, end) go: the store's bytes there may change. */
  private forgetCopies(jobId: string, start: number, end: number): void {
    const feed = this.feeds.get(jobId);
    if (!feed) return;
    for (const [offset, block] of feed.blocks) if (offset < end && start < offset + block.length) this.drop(feed, offset);
  }

  private drop(feed: Feed, offset: number): void {
    const block = feed.blocks.get(offset);
    if (!block) return;
    feed.blocks.delete(offset);
    feed.bytes -= block.length;
  }
}
