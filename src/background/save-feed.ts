import type { DownloadStore } from '../engine';

/** Bytes kept per streamed save, at most: blocks just stored that its stream will send next. */
const WINDOW_BYTES = 64 * 1024 * 1024;

interface Feed {
  /** Where the save's stream is: blocks before it are dropped, blocks past pos + window never kept. */
  pos: number;
  blocks: Map<number, Uint8Array>;
  bytes: number;
}

/**
 * Hands a streamed save the blocks the engine just stored, from memory, instead of reading them
 * back from IndexedDB: a read transaction waits behind every write transaction in flight, and
 * reading a Blob back costs a file read and a copy between processes. Only blocks within a
 * bounded window ahead of a save's position are kept (copied: the engine reuses its buffers);
 * anything else is read from the store as before. Pure bookkeeping: feeding() taps a store.
 */
export class SaveFeed {
  private readonly feeds = new Map<string, Feed>();

  constructor(private readonly windowBytes = WINDOW_BYTES) {}

  /** A save of `jobId` streams from `pos` on; returns its release. One save per job at a time. */
  open(jobId: string, pos: number): () => void {
    const feed: Feed = { pos, blocks: new Map(), bytes: 0 };
    this.feeds.set(jobId, feed);
    return () => {
      if (this.feeds.get(jobId) === feed) this.feeds.delete(jobId);
    };
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

  /** The engine stored `data` at `offset`; the feed keeps it (the caller's copy) if its save still wants it. */
  stored(jobId: string, offset: number, data: Uint8Array): void {
    if (!this.wants(jobId, offset, data.length)) return;
    const feed = this.feeds.get(jobId)!;
    this.discarded(jobId, offset, offset + data.length);
    feed.blocks.set(offset, data);
    feed.bytes += data.length;
  }

  /** Bytes [start, end) are no longer stored (or were replaced): kept copies of them go. */
  discarded(jobId: string, start: number, end: number): void {
    const feed = this.feeds.get(jobId);
    if (!feed) return;
    for (const [offset, block] of feed.blocks) if (offset < end && start < offset + block.length) this.drop(feed, offset);
  }

  /** Up to `max` kept bytes starting exactly at `pos`, or undefined; what it returns is no longer kept. */
  take(jobId: string, pos: number, max: number): Uint8Array | undefined {
    const feed = this.feeds.get(jobId);
    const block = feed?.blocks.get(pos);
    if (!feed || !block || max <= 0) return undefined;
    this.drop(feed, pos);
    if (block.length <= max) return block;
    feed.blocks.set(pos + max, block.subarray(max));
    feed.bytes += block.length - max;
    return block.subarray(0, max);
  }

  /** `store`, telling this feed what it stores and discards. */
  feeding<S extends DownloadStore>(store: S): S {
    return new Proxy(store, {
      get: (target, property) => {
        if (property === 'writeBlock')
          return async (jobId: string, offset: number, data: Uint8Array) => {
            // Copied before the write: the store may move `data` to its writer's thread.
            const copy = this.wants(jobId, offset, data.length) ? data.slice() : undefined;
            // What the store resolves with (a moved buffer handed back) goes on to the engine.
            const returned = await target.writeBlock(jobId, offset, data);
            if (copy) this.stored(jobId, offset, copy);
            return returned;
          };
        if (property === 'discardRange')
          return async (jobId: string, start: number, end: number) => {
            this.discarded(jobId, start, end);
            await target.discardRange(jobId, start, end);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  private drop(feed: Feed, offset: number): void {
    const block = feed.blocks.get(offset);
    if (!block) return;
    feed.blocks.delete(offset);
    feed.bytes -= block.length;
  }
}
