import { describe, expect, it } from 'vitest';
import { SaveFeed } from '../../../src/background/saving/save-feed';
import type { DownloadStore } from '../../../src/engine';

const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);

describe('SaveFeed', () => {
  it('hands a save the blocks just stored at its position, once each, copied before a store takes the buffer', async () => {
    const feed = new SaveFeed(100);
    // Like OpfsStore: the written buffer moves to another thread and is detached here.
    const moved: Uint8Array[] = [];
    const store = feed.feeding({
      writeBlock: async (_job: string, _offset: number, data: Uint8Array) => {
        moved.push(structuredClone(data, { transfer: [data.buffer] }));
      },
    } as unknown as DownloadStore);
    feed.open('j', 0);
    const given = bytes(10, 1);
    await store.writeBlock('j', 0, given);
    expect(given.byteLength).toBe(0);
    expect(moved[0]).toEqual(bytes(10, 1));
    expect(feed.take('j', 0, 100)).toEqual(bytes(10, 1));
    expect(feed.take('j', 0, 100)).toBeUndefined();
  });

  it('passes on the buffer a store hands back, so the engine reuses it (with or without a save open)', async () => {
    const feed = new SaveFeed(100);
    const store = feed.feeding({
      writeBlock: async (_job: string, _offset: number, data: Uint8Array) => {
        const moved = structuredClone(data, { transfer: [data.buffer] });
        return structuredClone(moved, { transfer: [moved.buffer] });
      },
    } as unknown as DownloadStore);
    const returned = await store.writeBlock('j', 0, bytes(10, 5));
    expect(returned).toEqual(bytes(10, 5));
    feed.open('j', 10);
    expect(await store.writeBlock('j', 10, bytes(10, 6))).toEqual(bytes(10, 6));
    expect(feed.take('j', 10, 100)).toEqual(bytes(10, 6));
  });

  it('keeps nothing for a job without a save, behind the save, or past its window', () => {
    const feed = new SaveFeed(20);
    feed.stored('j', 0, bytes(10, 1));
    feed.open('j', 10);
    feed.stored('j', 0, bytes(10, 1)); // behind
    feed.stored('j', 25, bytes(10, 1)); // past 10 + 20
    feed.stored('j', 10, bytes(10, 2));
    feed.stored('j', 20, bytes(10, 3));
    feed.stored('j', 30, bytes(1, 4)); // the window is full
    expect(feed.take('j', 0, 100)).toBeUndefined();
    expect(feed.take('j', 25, 100)).toBeUndefined();
    expect(feed.take('j', 10, 100)).toEqual(bytes(10, 2));
    expect(feed.take('j', 20, 100)).toEqual(bytes(10, 3));
    expect(feed.take('j', 30, 100)).toBeUndefined();
  });

  it('splits a block at what the save may send now, and never returns an empty piece', () => {
    const feed = new SaveFeed(100);
    feed.open('j', 0);
    feed.stored(
      'j',
      0,
      Uint8Array.from({ length: 10 }, (_, i) => i),
    );
    expect(feed.take('j', 0, 4)).toEqual(Uint8Array.from([0, 1, 2, 3]));
    expect(feed.take('j', 4, 0)).toBeUndefined();
    expect(feed.take('j', 4, 100)).toEqual(Uint8Array.from([4, 5, 6, 7, 8, 9]));
  });

  it('drops kept blocks that are discarded, that the save went past, or when the save ends', async () => {
    const feed = new SaveFeed(100);
    const close = feed.open('j', 0);
    for (const offset of [0, 10, 20, 30]) feed.stored('j', offset, bytes(10, offset));
    feed.advance('j', 20);
    expect(feed.take('j', 0, 100)).toBeUndefined();
    expect(feed.take('j', 10, 100)).toBeUndefined();
    const store = feed.feeding({
      discardRange: async () => {},
      writeBlock: async () => {},
    } as unknown as DownloadStore);
    await store.discardRange('j', 25, 26);
    expect(feed.take('j', 20, 100)).toBeUndefined();
    close();
    expect(feed.take('j', 30, 100)).toBeUndefined();
    // A tapped store's writes reach a save that is open.
    feed.open('j', 0);
    await store.writeBlock('j', 0, bytes(5, 7));
    expect(feed.take('j', 0, 100)).toEqual(bytes(5, 7));
  });
});

/** A store whose calls each wait for the test to settle them (`settle(i)`, in any order); what they change applies at once. */
function heldStore() {
  const pending: (() => void)[] = [];
  const held = () => new Promise<void>((resolve) => pending.push(resolve));
  const store = {
    writeBlock: () => held(),
    discardRange: () => held(),
    clearBytes: () => held(),
    deleteJob: () => held(),
  } as unknown as DownloadStore;
  return { store, settle: (call: number) => pending[call]!() };
}

describe('SaveFeed: what a save takes is what the store holds', () => {
  it('keeps no copy of a write whose bytes are discarded while it is in flight (the store holds no such bytes)', async () => {
    const feed = new SaveFeed(100);
    const { store, settle } = heldStore();
    const tapped = feed.feeding(store);
    feed.open('j', 0);
    const write = tapped.writeBlock('j', 0, bytes(10, 1));
    const discard = tapped.discardRange('j', 0, 10);
    settle(1);
    settle(0);
    await Promise.all([write, discard]);
    expect(feed.take('j', 0, 100)).toBeUndefined();
  });

  it('keeps neither of two writes of the same bytes in flight at once, whichever ends last', async () => {
    const feed = new SaveFeed(100);
    const { store, settle } = heldStore();
    const tapped = feed.feeding(store);
    feed.open('j', 0);
    const first = tapped.writeBlock('j', 0, bytes(10, 1));
    const second = tapped.writeBlock('j', 5, bytes(10, 2));
    settle(1);
    settle(0);
    await Promise.all([first, second]);
    expect(feed.take('j', 0, 100)).toBeUndefined();
    expect(feed.take('j', 5, 100)).toBeUndefined();
    // A later write alone is kept again.
    const third = tapped.writeBlock('j', 20, bytes(10, 3));
    settle(2);
    await third;
    expect(feed.take('j', 20, 100)).toEqual(bytes(10, 3));
  });

  it.each(['clearBytes', 'deleteJob'] as const)('drops every kept block when the store %s', async (call) => {
    const feed = new SaveFeed(100);
    const tapped = feed.feeding({ clearBytes: async () => {}, deleteJob: async () => {} } as unknown as DownloadStore);
    feed.open('j', 0);
    feed.stored('j', 0, bytes(10, 1));
    await tapped[call]('j');
    expect(feed.take('j', 0, 100)).toBeUndefined();
  });

  it('spoils the save when bytes it took are forgotten at the store, whoever does it, and only then', async () => {
    const feed = new SaveFeed(100);
    const tapped = feed.feeding({ discardRange: async () => {}, writeBlock: async () => {} } as unknown as DownloadStore);
    feed.open('j', 0);
    feed.stored('j', 0, bytes(10, 1));
    expect(feed.take('j', 0, 100)).toEqual(bytes(10, 1));
    feed.reading('j', 10, 30);
    // Bytes it has not taken may change; writing over stored bytes writes the same ones (DownloadStore.writeBlock).
    await tapped.discardRange('j', 30, 40);
    await tapped.writeBlock('j', 0, bytes(10, 1));
    expect(feed.spoiled('j')).toBeUndefined();
    await tapped.discardRange('j', 25, 26);
    expect(feed.spoiled('j')).toBe('bytes already saved were replaced');
  });

  it('spoils the save when it starts reading bytes that are being forgotten', async () => {
    const feed = new SaveFeed(100);
    const { store, settle } = heldStore();
    const tapped = feed.feeding(store);
    feed.open('j', 0);
    const discard = tapped.discardRange('j', 40, 50);
    feed.reading('j', 0, 40);
    expect(feed.spoiled('j')).toBeUndefined();
    feed.reading('j', 40, 60);
    expect(feed.spoiled('j')).toBe('bytes being saved were replaced');
    settle(0);
    await discard;
    // A new save starts clean.
    feed.open('j', 0);
    expect(feed.spoiled('j')).toBeUndefined();
  });
});
