import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ByteRange } from '../../src/engine/ranges';
import { isQuotaError, type DownloadStore } from '../../src/engine/store';

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
      for (const [start, end] of [
        [0, 100],
        [100, 300],
        [300, 350],
      ] as const) {
        await store.writeBlock('job', start, content.slice(start, end));
      }
      for (const [start, end] of [
        [50, 320],
        [120, 130],
        [100, 300],
        [0, 350],
        [349, 350],
      ] as const) {
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

    it('keeps no hold on a block once its write resolved: the engine reuses the buffer', async () => {
      const lent = pattern(5, 3000);
      const kept = lent.slice();
      await store.writeBlock('job', 0, lent.subarray(0, 2000));
      await store.writeBlock('job', 2000, lent.subarray(2000));
      lent.fill(0xee);
      expect(equalBytes(await readAll(store, 'job', 0, 3000), kept)).toBe(true);
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

    /** `base` with `replacement` at `at`: what the job must hold after rewriting a range. */
    const spliced = (base: Uint8Array, at: number, replacement: Uint8Array): Uint8Array => {
      const out = base.slice();
      out.set(replacement, at);
      return out;
    };

    it('discardRange in the middle of a record keeps the bytes around it; a rewrite with other bytes reads back', async () => {
      const content = pattern(20, 300);
      await store.writeBlock('job', 0, content.slice());
      await store.discardRange('job', 100, 200);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 100 },
        { start: 200, end: 300 },
      ]);
      expect(equalBytes(await readAll(store, 'job', 0, 100), content.subarray(0, 100))).toBe(true);
      expect(equalBytes(await readAll(store, 'job', 200, 300), content.subarray(200))).toBe(true);
      await expect(readAll(store, 'job', 0, 300)).rejects.toThrow(/byte 100 is not stored/);
      await expect(readAll(store, 'job', 150, 250)).rejects.toThrow(/byte 150 is not stored/);

      const fresh = pattern(21, 100);
      await store.writeBlock('job', 100, fresh);
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 300 }]);
      expect(equalBytes(await readAll(store, 'job', 0, 300), spliced(content, 100, fresh))).toBe(true);
      expect(equalBytes(await readAll(store, 'job', 99, 201), spliced(content, 100, fresh).subarray(99, 201))).toBe(true);
    });

    it('discardRange across record boundaries; the rewrite may use other boundaries', async () => {
      const content = pattern(22, 400);
      for (const [start, end] of [
        [0, 100],
        [100, 200],
        [200, 300],
        [300, 400],
      ] as const) {
        await store.writeBlock('job', start, content.slice(start, end));
      }
      await store.discardRange('job', 50, 250);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 50 },
        { start: 250, end: 400 },
      ]);
      expect(equalBytes(await readAll(store, 'job', 0, 50), content.subarray(0, 50))).toBe(true);
      expect(equalBytes(await readAll(store, 'job', 250, 400), content.subarray(250))).toBe(true);

      const fresh = pattern(23, 200);
      await store.writeBlock('job', 180, fresh.slice(130));
      await store.writeBlock('job', 50, fresh.slice(0, 130));
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 400 }]);
      const expected = spliced(content, 50, fresh);
      expect(equalBytes(await readAll(store, 'job', 0, 400), expected)).toBe(true);
      for (const [start, end] of [
        [49, 51],
        [179, 181],
        [249, 251],
        [120, 320],
      ] as const) {
        expect(equalBytes(await readAll(store, 'job', start, end), expected.subarray(start, end))).toBe(true);
      }
    });

    it('discardRange of whole records, and of a range only partly stored', async () => {
      const content = pattern(24, 300);
      for (const [start, end] of [
        [0, 100],
        [100, 200],
        [200, 300],
      ] as const) {
        await store.writeBlock('job', start, content.slice(start, end));
      }
      await store.discardRange('job', 100, 200);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 100 },
        { start: 200, end: 300 },
      ]);
      // Partly stored: [80, 100) and [200, 220) go, the gap in between changes nothing.
      await store.discardRange('job', 80, 220);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 80 },
        { start: 220, end: 300 },
      ]);
      await store.discardRange('job', 0, 80);
      expect(await store.storedRanges('job')).toEqual([{ start: 220, end: 300 }]);
      expect(equalBytes(await readAll(store, 'job', 220, 300), content.subarray(220))).toBe(true);

      const fresh = pattern(25, 220);
      await store.writeBlock('job', 0, fresh);
      expect(equalBytes(await readAll(store, 'job', 0, 300), spliced(content, 0, fresh))).toBe(true);
      await store.discardRange('job', 0, 300);
      expect(await store.storedRanges('job')).toEqual([]);
    });

    it('discardRange of nothing stored changes nothing', async () => {
      const content = pattern(26, 100);
      await store.writeBlock('job', 0, content.slice(0, 50));
      await store.writeBlock('job', 70, content.slice(70));
      const before = [
        { start: 0, end: 50 },
        { start: 70, end: 100 },
      ];
      await store.discardRange('job', 50, 70); // the gap
      await store.discardRange('job', 100, 1000); // past the end
      await store.discardRange('job', 20, 20); // empty
      await store.discardRange('other', 0, 100); // unknown job
      expect(await store.storedRanges('job')).toEqual(before);
      expect(await store.storedRanges('other')).toEqual([]);
      expect(equalBytes(await readAll(store, 'job', 0, 50), content.subarray(0, 50))).toBe(true);
      expect(equalBytes(await readAll(store, 'job', 70, 100), content.subarray(70))).toBe(true);
      await expect(store.discardRange('job', -1, 5)).rejects.toThrow(RangeError);
      await expect(store.discardRange('job', 5, 4)).rejects.toThrow(RangeError);
      await expect(store.discardRange('job', 0.5, 4)).rejects.toThrow(RangeError);
      expect(await store.storedRanges('job')).toEqual(before);
    });

    it('discardRange keeps state and other jobs', async () => {
      await store.saveState('a', { id: 'a' });
      for (const id of ['a', 'ab']) await store.writeBlock(id, 0, pattern(27, 100));
      await store.discardRange('a', 0, 100);
      expect(await store.storedRanges('a')).toEqual([]);
      expect(await store.loadState('a')).toEqual({ id: 'a' });
      expect(await store.listJobs()).toEqual(['a']);
      expect(equalBytes(await readAll(store, 'ab', 0, 100), pattern(27, 100))).toBe(true);
    });

    it('overlapping writes with different bytes read back the newest', async () => {
      const a = pattern(28, 100);
      const b = pattern(29, 100);
      const c = pattern(30, 50);
      await store.writeBlock('job', 0, a); // [0, 100)
      await store.writeBlock('job', 50, b); // [50, 150): over the end of a
      await store.writeBlock('job', 25, c); // [25, 75): over both
      const expected = spliced(spliced(spliced(new Uint8Array(150), 0, a), 50, b), 25, c);
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 150 }]);
      expect(equalBytes(await readAll(store, 'job', 0, 150), expected)).toBe(true);

      const d = pattern(31, 40);
      await store.writeBlock('job', 80, d); // inside b only
      const e = pattern(32, 200);
      await store.writeBlock('job', 100, e); // over the end of everything
      const last = spliced(spliced(spliced(new Uint8Array(300), 0, expected), 80, d), 100, e);
      expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 300 }]);
      expect(equalBytes(await readAll(store, 'job', 0, 300), last)).toBe(true);
      for (const [start, end] of [
        [24, 26],
        [74, 76],
        [79, 81],
        [99, 101],
        [119, 121],
        [10, 290],
      ] as const) {
        expect(equalBytes(await readAll(store, 'job', start, end), last.subarray(start, end))).toBe(true);
      }
    });

    it('random writes and discards always match a model of the newest bytes', async () => {
      const random = seeded(33);
      const total = 5000;
      const model = new Uint8Array(total);
      const stored = new Uint8Array(total); // 1 where a byte is stored
      const pick = (): [number, number] => {
        const start = Math.floor(random() * (total - 1));
        return [start, Math.min(total, start + 1 + Math.floor(random() * 800))];
      };
      for (let step = 0; step < 60; step++) {
        const [start, end] = pick();
        if (random() < 0.3) {
          await store.discardRange('job', start, end);
          stored.fill(0, start, end);
        } else {
          const bytes = pattern(1000 + step, end - start);
          await store.writeBlock('job', start, bytes);
          model.set(bytes, start);
          stored.fill(1, start, end);
        }
        const ranges = await store.storedRanges('job');
        expect(ranges).toEqual(rangesOf(stored));
        if (step % 10 === 9 || step === 59) {
          for (const r of ranges) {
            expect(equalBytes(await readAll(store, 'job', r.start, r.end), model.subarray(r.start, r.end))).toBe(true);
          }
        }
      }
    });

    it('a discard and the bytes rewritten after it persist across reopening', async () => {
      const content = pattern(34, 300);
      await store.writeBlock('job', 0, content.slice(0, 150));
      await store.writeBlock('job', 150, content.slice(150));
      await store.discardRange('job', 100, 200);
      store = await harness.reopen(store);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 100 },
        { start: 200, end: 300 },
      ]);
      const fresh = pattern(35, 60);
      await store.writeBlock('job', 120, fresh);
      store = await harness.reopen(store);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 100 },
        { start: 120, end: 180 },
        { start: 200, end: 300 },
      ]);
      expect(equalBytes(await readAll(store, 'job', 120, 180), fresh)).toBe(true);
      expect(equalBytes(await readAll(store, 'job', 0, 100), content.subarray(0, 100))).toBe(true);
      expect(equalBytes(await readAll(store, 'job', 200, 300), content.subarray(200))).toBe(true);
    });

    // IdbStore once kept the part of a cut Blob record as a Blob slice, which Firefox stores as the
    // whole Blob: the tail read back from the record's start (tests/e2e/idb-store.test.ts).
    it('bytes kept around a cut stay at their positions, through cuts of kept parts and reopening', async () => {
      const content = pattern(36, 1000);
      await store.writeBlock('job', 0, content.slice());
      await store.discardRange('job', 200, 300); // keeps [0, 200) and [300, 1000)
      const fresh = pattern(37, 100);
      await store.writeBlock('job', 600, fresh); // cuts the kept tail in two
      await store.discardRange('job', 400, 450); // and one of its parts again
      store = await harness.reopen(store);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 200 },
        { start: 300, end: 400 },
        { start: 450, end: 1000 },
      ]);
      const expected = spliced(content, 600, fresh);
      for (const [start, end] of [
        [0, 200],
        [300, 400],
        [450, 1000],
        [450, 451],
        [699, 701],
        [990, 1000],
      ] as const) {
        expect(equalBytes(await readAll(store, 'job', start, end), expected.subarray(start, end)), `[${start}, ${end})`).toBe(true);
      }
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

/** The normalized ranges of the 1s in a 0/1 map. */
function rangesOf(map: Uint8Array): ByteRange[] {
  const ranges: ByteRange[] = [];
  for (let i = 0; i < map.length;) {
    if (!map[i]) {
      i++;
      continue;
    }
    const start = i;
    while (i < map.length && map[i]) i++;
    ranges.push({ start, end: i });
  }
  return ranges;
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
  for (let start = 0; start < total;) {
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
