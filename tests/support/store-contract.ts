import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ByteRange } from '../../src/storage/ranges';
import { isQuotaError, type DownloadStore } from '../../src/storage/store';

/** How the contract gets, reopens and disposes of one kind of store. */
export interface StoreHarness<S extends DownloadStore> {
  /** A store over fresh, empty storage. */
  open(): Promise<S>;
  /** Closes `store` and opens a new instance over the same storage. */
  reopen(store: S): Promise<S>;
  /** Closes `store` and removes its storage. */
  dispose(store: S): Promise<void>;
  /** Makes the store's next block write fail like a full disk; returns an undo. */
  failNextWriteWithQuota(store: S): () => void;
}

/** Registers the DownloadStore contract tests for one store implementation. */
export function describeStoreContract<S extends DownloadStore>(name: string, harness: StoreHarness<S>): void {
  describe(`${name}: DownloadStore contract`, () => {
    let store: S;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await harness.dispose(store);
    });

    it('starts empty', async () => {
      expect(await store.storedRanges('job')).toEqual([]);
      expect(await store.loadState('job')).toBeUndefined();
      expect(await store.listJobs()).toEqual([]);
    });

    it('round-trips random blocks written out of order, all in flight at once', async () => {
      const random = seeded(1);
      const total = 300_000 + Math.floor(random() * 50_000);
      const content = pattern(2, total);
      const pieces = cut(random, total, 10_000);
      shuffle(random, pieces);
      await Promise.all(pieces.map((p) => store.writeBlock('job', p.start, content.slice(p.start, p.end))));

      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: total }]);
      expect(equalBytes(await readAll(store, 'job', 0, total), content)).toBe(true);
      for (let i = 0; i < 20; i++) {
        const a = Math.floor(random() * total);
        const b = Math.floor(random() * total);
        const [start, end] = a < b ? [a, b] : [b, a];
        expect(equalBytes(await readAll(store, 'job', start, end), content.subarray(start, end))).toBe(true);
      }
    });

    it('reads exactly [start, end) when blocks overlap the range partially', async () => {
      const content = pattern(3, 350);
      for (const [start, end] of [[0, 100], [100, 300], [300, 350]] as const) {
        await store.writeBlock('job', start, content.slice(start, end));
      }
      for (const [start, end] of [[50, 320], [120, 130], [100, 300], [0, 350], [349, 350]] as const) {
        const chunks = await collect(store.read('job', start, end));
        expect(chunks.every((c) => c instanceof Uint8Array)).toBe(true);
        expect(equalBytes(concat(chunks), content.subarray(start, end))).toBe(true);
      }
      expect(await collect(store.read('job', 120, 120))).toEqual([]);
    });

    it('does not double-count overlapping writes; a rewrite replaces the bytes', async () => {
      const content = pattern(4, 150);
      await store.writeBlock('job', 0, content.slice(0, 100));
      await store.writeBlock('job', 50, content.slice(50, 150));
      await store.writeBlock('job', 0, content.slice(0, 100));
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 150 }]);
      expect(equalBytes(await readAll(store, 'job', 0, 150), content)).toBe(true);

      const refetched = pattern(5, 100);
      await store.writeBlock('job', 0, refetched);
      expect(equalBytes(await readAll(store, 'job', 0, 100), refetched)).toBe(true);
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 150 }]);
    });

    it('merges stored ranges', async () => {
      for (const start of [0, 20, 10, 40]) await store.writeBlock('job', start, pattern(start, 10));
      expect(await store.storedRanges('job')).toEqual<ByteRange[]>([
        { start: 0, end: 30 },
        { start: 40, end: 50 },
      ]);
    });

    it('throws when a requested byte is not stored', async () => {
      await store.writeBlock('job', 0, pattern(6, 10));
      await store.writeBlock('job', 20, pattern(7, 10));
      await expect(readAll(store, 'job', 0, 30)).rejects.toThrow(/byte 10 is not stored/);
      await expect(readAll(store, 'job', 25, 31)).rejects.toThrow(/byte 30 is not stored/);
      await expect(readAll(store, 'other', 0, 1)).rejects.toThrow(/byte 0 is not stored/);
      expect(await readAll(store, 'job', 20, 30)).toHaveLength(10);
    });

    it('rejects invalid offsets and ranges', async () => {
      await expect(store.writeBlock('job', -1, pattern(8, 1))).rejects.toThrow(RangeError);
      await expect(store.writeBlock('job', 0.5, pattern(8, 1))).rejects.toThrow(RangeError);
      await expect(readAll(store, 'job', 5, 4)).rejects.toThrow(RangeError);
    });

    it('keeps state round trips and overwrites', async () => {
      const state = { url: 'https://example.test/a.iso', size: 123, mirrors: ['x', 'y'], nested: { ok: true } };
      await store.saveState('job', state);
      expect(await store.loadState('job')).toEqual(state);
      await store.saveState('job', { ...state, size: 456 });
      expect(await store.loadState('job')).toEqual({ ...state, size: 456 });
    });

    it('lists only jobs with saved state', async () => {
      await store.saveState('j1', { n: 1 });
      await store.saveState('j2', { n: 2 });
      await store.writeBlock('j3', 0, pattern(9, 10));
      expect((await store.listJobs()).sort()).toEqual(['j1', 'j2']);
      await store.deleteJob('j1');
      expect(await store.listJobs()).toEqual(['j2']);
    });

    it('clearBytes forgets bytes, keeps state; deleteJob forgets both; ids do not leak into each other', async () => {
      // 'a' is a prefix of 'ab': a key range per job must not catch the other.
      for (const id of ['a', 'ab']) {
        await store.saveState(id, { id });
        await store.writeBlock(id, 0, pattern(10, 100));
      }
      await store.clearBytes('a');
      expect(await store.storedRanges('a')).toEqual([]);
      expect(await store.loadState('a')).toEqual({ id: 'a' });
      expect(await store.storedRanges('ab')).toEqual([{ start: 0, end: 100 }]);

      await store.writeBlock('a', 10, pattern(11, 5));
      expect(await store.storedRanges('a')).toEqual([{ start: 10, end: 15 }]);

      await store.deleteJob('a');
      expect(await store.storedRanges('a')).toEqual([]);
      expect(await store.loadState('a')).toBeUndefined();
      expect(await store.listJobs()).toEqual(['ab']);
      expect(equalBytes(await readAll(store, 'ab', 0, 100), pattern(10, 100))).toBe(true);
    });

    it('persists bytes, ranges and state across reopening', async () => {
      const content = pattern(12, 5000);
      await store.writeBlock('job', 0, content.slice(0, 3000));
      await store.writeBlock('job', 4000, content.slice(4000));
      await store.saveState('job', { step: 2 });
      store = await harness.reopen(store);
      expect(await store.listJobs()).toEqual(['job']);
      expect(await store.loadState('job')).toEqual({ step: 2 });
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 3000 },
        { start: 4000, end: 5000 },
      ]);
      expect(equalBytes(await readAll(store, 'job', 4000, 5000), content.subarray(4000))).toBe(true);
    });

    it('surfaces a quota error as such and keeps earlier blocks intact', async () => {
      const content = pattern(13, 3000);
      await store.writeBlock('job', 0, content.slice(0, 1000));
      const undo = harness.failNextWriteWithQuota(store);
      let failure: unknown;
      try {
        await store.writeBlock('job', 1000, content.slice(1000, 2000));
      } catch (error) {
        failure = error;
      } finally {
        undo();
      }
      expect(isQuotaError(failure)).toBe(true);
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 1000 }]);
      expect(equalBytes(await readAll(store, 'job', 0, 1000), content.subarray(0, 1000))).toBe(true);

      store = await harness.reopen(store);
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 1000 }]);
      await store.writeBlock('job', 1000, content.slice(1000));
      expect(equalBytes(await readAll(store, 'job', 0, 3000), content)).toBe(true);
    });
  });
}

export async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

export async function readAll(store: DownloadStore, jobId: string, start: number, end: number): Promise<Uint8Array> {
  return concat(await collect(store.read(jobId, start, end)));
}

export function concat(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** Deterministic bytes, different per seed. */
export function pattern(seed: number, length: number): Uint8Array {
  const random = seeded(seed + 1000);
  return Uint8Array.from({ length }, () => Math.floor(random() * 256));
}

/** mulberry32: reproducible randomness so a failure can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits [0, total) into consecutive pieces of 1..maxSize bytes. */
function cut(random: () => number, total: number, maxSize: number): ByteRange[] {
  const pieces: ByteRange[] = [];
  for (let start = 0; start < total; ) {
    const end = Math.min(total, start + 1 + Math.floor(random() * maxSize));
    pieces.push({ start, end });
    start = end;
  }
  return pieces;
}

function shuffle<T>(random: () => number, items: T[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}
