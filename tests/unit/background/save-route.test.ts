import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SaveFeed } from '../../../src/background/saving/save-feed';
import { HOLD_BACK } from '../../../src/background/saving/save-hold-back';
import { answerSave } from '../../../src/background/saving/save-route';
import { normalizeRanges, removeRange, type ByteRange, type DownloadStore } from '../../../src/engine';

const MiB = 1024 * 1024;
const SIZE = 3 * MiB;

/**
 * A job's bytes in memory: each call changes them at once, in call order, as the stores do; a
 * write's range counts as stored once it resolves, which the test may hold back (`holdNextWrite`).
 */
class MemoryStore {
  readonly bytes = new Uint8Array(SIZE);
  stored: ByteRange[] = [];
  private held: Promise<void> | undefined;

  /** The next write resolves only when the returned function is called. */
  holdNextWrite(): () => void {
    let release = () => {};
    this.held = new Promise((resolve) => (release = resolve));
    return release;
  }

  readonly writeBlock = async (_jobId: string, offset: number, data: Uint8Array): Promise<void> => {
    this.bytes.set(data, offset);
    const held = this.held;
    this.held = undefined;
    await held;
    this.stored = normalizeRanges([...this.stored, { start: offset, end: offset + data.length }]);
  };

  readonly discardRange = async (_jobId: string, start: number, end: number): Promise<void> => {
    this.stored = removeRange(this.stored, { start, end });
  };

  readonly readBlobs = async (_jobId: string, start: number, end: number): Promise<Blob[]> => [new Blob([this.bytes.slice(start, end)])];
}

/** The save route of job `j` over `store`, as the worker runs it; `verified()` completes the job. */
function saveRoute(store: MemoryStore) {
  const feed = new SaveFeed();
  const view = { id: 'j', size: SIZE, state: 'running', filename: 'image.img' };
  const deps = {
    hub: {
      follow: () => () => {},
      storedRanges: async () => store.stored,
      nextChange: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 2)),
    },
    store: async () => ({ read: () => (async function* () {})(), readBlobs: store.readBlobs }),
    jobs: async () => ({ get: () => view as never, bytesFreed: () => false }),
    feed,
  };
  return {
    /** The store as the engine writes through it in the worker. */
    engineStore: feed.feeding(store as unknown as DownloadStore),
    answer: () => answerSave(deps, 'j'),
    verified: () => (view.state = 'saving'),
  };
}

/** Reads the body until `length` bytes came, or to its end. */
async function readBody(reader: ReadableStreamDefaultReader<Uint8Array>, length = Infinity): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  let got = 0;
  while (got < length) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    got += value.length;
  }
  return chunks;
}

const sha256 = (chunks: Uint8Array[]) => createHash('sha256').update(Buffer.concat(chunks)).digest('hex');
const filled = (length: number, value: number) => new Uint8Array(length).fill(value);

describe('answerSave: the browser gets the bytes that passed the checks', () => {
  it('never sends the copy of a write whose bytes were replaced while it was in flight', async () => {
    const store = new MemoryStore();
    const route = saveRoute(store);
    const response = await route.answer();
    // A write of a block; before it resolves, the block is discarded and written anew, the new write ending first.
    const release = store.holdNextWrite();
    const stale = route.engineStore.writeBlock('j', 0, filled(MiB, 1));
    await route.engineStore.discardRange('j', 0, MiB);
    await route.engineStore.writeBlock('j', 0, filled(MiB, 2));
    release();
    await stale;
    await route.engineStore.writeBlock('j', MiB, filled(2 * MiB, 3));
    route.verified();

    const sent = await readBody(response.body!.getReader());
    expect(sha256(sent)).toBe(sha256([store.bytes]));
    expect(sent.reduce((n, c) => n + c.length, 0)).toBe(SIZE);
  });

  it('fails the save when bytes already sent are discarded at the store, though the job says nothing (a re-check after a digest mismatch)', async () => {
    const store = new MemoryStore();
    const route = saveRoute(store);
    await route.engineStore.writeBlock('j', 0, filled(SIZE, 1));
    const response = await route.answer();
    const reader = response.body!.getReader();
    expect((await readBody(reader, SIZE - HOLD_BACK)).reduce((n, c) => n + c.length, 0)).toBe(SIZE - HOLD_BACK);

    // Block-level re-verification replaces a lying mirror's bytes: a discard, then the primary's bytes.
    await route.engineStore.discardRange('j', 0, MiB);
    await route.engineStore.writeBlock('j', 0, filled(MiB, 2));
    route.verified();
    await expect(readBody(reader)).rejects.toThrow('bytes already saved were replaced');
  });
});
