import { describe, expect, it } from 'vitest';
import { SaveFeed } from '../../../src/background/saving/save-feed';
import { ReleaseBehind } from '../../../src/background/saving/save-release';
import { normalizeRanges, removeRange, type ByteRange, type DownloadStore } from '../../../src/engine';

const STEP = 100;

/** A store that releases in steps of STEP, recording what the engine's view was while it forgot. */
class ReleasingStore {
  stored: ByteRange[] = [{ start: 0, end: 1000 }];
  calls: number[] = [];
  claimedDuring: ByteRange[][] = [];
  constructor(private readonly during?: () => Promise<ByteRange[]>) {}

  readonly releaseBefore = async (_jobId: string, offset: number): Promise<number> => {
    const end = Math.floor(offset / STEP) * STEP;
    this.calls.push(offset);
    this.stored = removeRange(this.stored, { start: 0, end });
    if (this.during) this.claimedDuring.push(await this.during());
    return end;
  };
  readonly storedRanges = async (): Promise<ByteRange[]> => this.stored;
  readonly writeBlock = async (_jobId: string, offset: number, data: Uint8Array): Promise<void> => {
    this.stored = normalizeRanges([...this.stored, { start: offset, end: offset + data.length }]);
  };
  readonly read = async function* (_jobId: string, start: number, end: number): AsyncIterable<Uint8Array> {
    for (let pos = start; pos < end; pos += 50) yield new Uint8Array(Math.min(50, end - pos));
  };
  readonly discardRange = async (_jobId: string, start: number, end: number): Promise<void> => {
    this.stored = removeRange(this.stored, { start, end });
  };
  readonly clearBytes = async (): Promise<void> => {
    this.stored = [];
  };
}

function fed(store: ReleasingStore, feed = new SaveFeed(1000, new ReleaseBehind(STEP))): { feed: SaveFeed; engine: DownloadStore } {
  return { feed, engine: feed.feeding(store as unknown as DownloadStore) };
}

describe('release-behind of a streamed save', () => {
  it('releases whole steps behind both what the save handed over and what the browser wrote', async () => {
    const store = new ReleasingStore();
    const { feed, engine } = fed(store);
    feed.open('j', 0);
    feed.advance('j', 350);
    await feed.written('j', 250); // the browser is behind what it was handed
    expect(store.calls).toEqual([200]);
    await feed.written('j', 900); // ahead of what was handed? never: bounded by 350
    expect(store.calls).toEqual([200, 300]);
    await feed.written('j', 390); // less than a step more: nothing asked
    expect(store.calls).toEqual([200, 300]);
    // The engine still sees every byte: the released ones are in the browser's file.
    expect(await engine.storedRanges('j')).toEqual([{ start: 0, end: 1000 }]);
    expect(store.stored).toEqual([{ start: 300, end: 1000 }]);
  });

  it('claims the bytes for the engine before the store forgets them', async () => {
    const view: { engine?: DownloadStore } = {};
    const store = new ReleasingStore(() => view.engine!.storedRanges('j'));
    const made = fed(store);
    view.engine = made.engine;
    made.feed.open('j', 0);
    made.feed.advance('j', 500);
    await made.feed.written('j', 500);
    expect(store.claimedDuring).toEqual([[{ start: 0, end: 1000 }]]);
  });

  it('never releases bytes an engine read (a hash of the stored prefix) is at or past', async () => {
    const store = new ReleasingStore();
    const { feed, engine } = fed(store);
    feed.open('j', 0);
    const reading = engine.read('j', 150, 400)[Symbol.asyncIterator]();
    await reading.next(); // at 150 while the consumer has that chunk
    feed.advance('j', 600);
    await feed.written('j', 600);
    expect(store.calls).toEqual([100]);
    await reading.next(); // the first chunk is consumed: the read is at 200
    await feed.written('j', 600);
    expect(store.calls).toEqual([100, 200]);
    while (!(await reading.next()).done);
    await feed.written('j', 600);
    expect(store.calls).toEqual([100, 200, 600]);
  });

  it('a save that ends without the file orphans its released bytes: no longer claimed, a new save refused until stored again', async () => {
    const store = new ReleasingStore();
    const { feed, engine } = fed(store);
    const end = feed.open('j', 0);
    feed.advance('j', 300);
    await feed.written('j', 300);
    end(false);
    expect(await engine.storedRanges('j')).toEqual([{ start: 300, end: 1000 }]);
    expect(feed.unavailable('j')).toMatch(/first 300 bytes went into an earlier save that did not finish/);
    await engine.writeBlock('j', 0, new Uint8Array(200));
    expect(feed.unavailable('j')).toBeDefined(); // 200–300 still missing
    await engine.writeBlock('j', 200, new Uint8Array(100));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(feed.unavailable('j')).toBeUndefined();
  });

  it('a save that handed every byte keeps its released bytes claimed until the job’s bytes are cleared', async () => {
    const store = new ReleasingStore();
    const { feed, engine } = fed(store);
    const end = feed.open('j', 0);
    feed.advance('j', 1000);
    await feed.written('j', 1000);
    end(true);
    expect(await engine.storedRanges('j')).toEqual([{ start: 0, end: 1000 }]);
    expect(feed.unavailable('j')).toBeUndefined();
    await engine.clearBytes('j');
    expect(await engine.storedRanges('j')).toEqual([]);
  });

  it('a spoiled save releases nothing more', async () => {
    const store = new ReleasingStore();
    const { feed, engine } = fed(store);
    feed.open('j', 0);
    feed.reading('j', 0, 300);
    feed.advance('j', 300);
    await engine.discardRange('j', 0, 50);
    await feed.written('j', 300);
    expect(store.calls).toEqual([]);
  });

  it('a store that cannot release (IndexedDB) is left alone', async () => {
    const feed = new SaveFeed(1000, new ReleaseBehind(STEP));
    const plain = { storedRanges: async () => [{ start: 0, end: 1000 }] };
    const engine = feed.feeding(plain as unknown as DownloadStore);
    feed.open('j', 0);
    feed.advance('j', 500);
    await feed.written('j', 500);
    expect(await engine.storedRanges('j')).toEqual([{ start: 0, end: 1000 }]);
  });
});
