import * as fake from 'fake-indexeddb';
import { wrap, type IDBPDatabase } from 'idb';
import { describe, expect, it, vi } from 'vitest';
import { useFakeIdbGlobals } from '../support/fake-idb-globals';
import { openIdbStore, type IdbRecordKind, type IdbStore } from '../../src/storage/idb-store';
import { isQuotaError } from '../../src/engine/store';
import { measureStoreThroughput, sha256OfStored } from '../support/measure-store';
import { concat, describeStoreContract, equalBytes, pattern, readAll, type StoreHarness } from '../support/store-contract';

useFakeIdbGlobals();

function harness(records: IdbRecordKind): StoreHarness<IdbStore> {
  const factories = new WeakMap<IdbStore, IDBFactory>();
  const open = async (factory: IDBFactory): Promise<IdbStore> => {
    const store = await openIdbStore({ indexedDB: factory, records });
    factories.set(store, factory);
    return store;
  };
  return {
    open: () => open(new fake.IDBFactory()),
    reopen: async (store) => {
      store.close();
      return open(factories.get(store)!);
    },
    dispose: async (store) => store.close(),
    failNextWriteWithQuota: () => failNextPut('abort'),
  };
}

/**
 * Makes the next put fail with QuotaExceededError: 'abort' aborts its transaction the way
 * Chrome does when a commit does not fit; 'throw' throws from put itself.
 */
function failNextPut(how: 'abort' | 'throw'): () => void {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the store as `this`
  const put = fake.IDBObjectStore.prototype.put;
  const spy = vi.spyOn(fake.IDBObjectStore.prototype, 'put').mockImplementationOnce(function (
    this: IDBObjectStore,
    value: unknown,
    key?: IDBValidKey,
  ) {
    if (how === 'throw') throw new DOMException('Quota exceeded', 'QuotaExceededError');
    const request = put.call(this, value, key);
    (this.transaction as unknown as { _abort(name: string): void })._abort('QuotaExceededError');
    return request;
  });
  return () => spy.mockRestore();
}

type RawKey = [jobId: string, offset: number, length: number];

/** A second connection to the store's database, to look at and plant raw block records. */
async function rawDb(factory: IDBFactory): Promise<IDBPDatabase> {
  return (await wrap(factory.open('stitch'))) as unknown as IDBPDatabase;
}

/** Every block record of the database, in key order. */
async function rawRecords(factory: IDBFactory): Promise<{ key: RawKey; value: unknown }[]> {
  const db = await rawDb(factory);
  const tx = db.transaction('blocks');
  const [keys, values] = await Promise.all([tx.store.getAllKeys(), tx.store.getAll()]);
  db.close();
  return keys.map((key, i) => ({ key: key as RawKey, value: values[i] }));
}

describeStoreContract('IdbStore (Blob records)', harness('blob'));
describeStoreContract('IdbStore (byte records)', harness('bytes'));

describe('IdbStore', () => {
  it('defaults to Blob records where the database clones Blobs (Node does)', async () => {
    const store = await openIdbStore({ indexedDB: new fake.IDBFactory() });
    expect(store.records).toBe('blob');
    expect(store.blockSize).toBe(4 * 1024 * 1024);
    expect(store.writeConcurrency).toBe(8);
    store.close();
  });

  it('falls back to byte records when Blob values are refused', async () => {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the store as `this`
    const put = fake.IDBObjectStore.prototype.put;
    const spy = vi.spyOn(fake.IDBObjectStore.prototype, 'put').mockImplementation(function (
      this: IDBObjectStore,
      value: unknown,
      key?: IDBValidKey,
    ) {
      if (value instanceof Blob) throw new DOMException('no Blobs here', 'DataCloneError');
      return put.call(this, value, key);
    });
    try {
      const store = await openIdbStore({ indexedDB: new fake.IDBFactory() });
      expect(store.records).toBe('bytes');
      await store.writeBlock('job', 0, pattern(1, 10));
      expect(equalBytes(await readAll(store, 'job', 0, 10), pattern(1, 10))).toBe(true);
      store.close();
    } finally {
      spy.mockRestore();
    }
  });

  it('readBlobs slices the first and last block to exactly [start, end)', async () => {
    const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'blob' });
    const content = pattern(2, 350);
    for (const [start, end] of [
      [0, 100],
      [100, 300],
      [300, 350],
    ] as const) {
      await store.writeBlock('job', start, content.slice(start, end));
    }
    const blobs = await store.readBlobs('job', 50, 320);
    expect(blobs.map((b) => b.size)).toEqual([50, 200, 20]);
    const bytes = concat(await Promise.all(blobs.map(async (b) => new Uint8Array(await b.arrayBuffer()))));
    expect(equalBytes(bytes, content.subarray(50, 320))).toBe(true);
    expect(await store.readBlobs('job', 7, 7)).toEqual([]);
    await expect(store.readBlobs('job', 300, 351)).rejects.toThrow(/byte 350 is not stored/);
    store.close();
  });

  it('readBlobs reads the records of a whole file in one transaction', async () => {
    const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'blob' });
    const content = pattern(4, 40 * 100);
    for (let start = 0; start < content.length; start += 100) await store.writeBlock('job', start, content.slice(start, start + 100));
    const transactions = vi.spyOn(fake.IDBDatabase.prototype, 'transaction');
    const blobs = await store.readBlobs('job', 30, content.length - 30);
    // One per record made a 1 GiB save start seconds late.
    expect(transactions).toHaveBeenCalledTimes(1);
    transactions.mockRestore();
    const bytes = concat(await Promise.all(blobs.map(async (b) => new Uint8Array(await b.arrayBuffer()))));
    expect(equalBytes(bytes, content.subarray(30, content.length - 30))).toBe(true);
    store.close();
  });

  it('readBlobs reads overlapping records left by older versions as read() does', async () => {
    const factory = new fake.IDBFactory();
    const store = await openIdbStore({ indexedDB: factory, records: 'blob' });
    const [a, b] = [pattern(17, 100), pattern(18, 100)];
    const db = await rawDb(factory);
    await db.put('blocks', new Blob([a as Uint8Array<ArrayBuffer>]), ['job', 0, 100]);
    await db.put('blocks', new Blob([b as Uint8Array<ArrayBuffer>]), ['job', 50, 100]);
    db.close();
    const blobs = await store.readBlobs('job', 0, 150);
    const bytes = concat(await Promise.all(blobs.map(async (blob) => new Uint8Array(await blob.arrayBuffer()))));
    expect(equalBytes(bytes, await readAll(store, 'job', 0, 150))).toBe(true);
    expect(equalBytes(bytes, concat([a, b.subarray(50)]))).toBe(true);
    await expect(store.readBlobs('job', 100, 151)).rejects.toThrow(/byte 150 is not stored/);
    store.close();
  });

  it('readBlobs refuses byte records', async () => {
    const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'bytes' });
    await expect(store.readBlobs('job', 0, 0)).rejects.toThrow(/Blob records/);
    store.close();
  });

  it('a QuotaExceededError thrown by put itself also surfaces and harms nothing', async () => {
    const store = await openIdbStore({ indexedDB: new fake.IDBFactory() });
    await store.writeBlock('job', 0, pattern(3, 100));
    const undo = failNextPut('throw');
    const failure = await store.writeBlock('job', 100, pattern(4, 100)).catch((error: unknown) => error);
    undo();
    expect((failure as Error).name).toBe('QuotaExceededError');
    expect(isQuotaError(failure)).toBe(true);
    expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 100 }]);
    expect(equalBytes(await readAll(store, 'job', 0, 100), pattern(3, 100))).toBe(true);
    store.close();
  });

  for (const records of ['blob', 'bytes'] as const) {
    it(`keeps ${records} records disjoint, of the same kind, through discards and overlapping writes`, async () => {
      const factory = new fake.IDBFactory();
      const store = await openIdbStore({ indexedDB: factory, records });
      const content = pattern(10, 300);
      for (const [start, end] of [
        [0, 100],
        [100, 200],
        [200, 300],
      ] as const) {
        await store.writeBlock('job', start, content.slice(start, end));
      }
      await store.discardRange('job', 50, 250);
      expect((await rawRecords(factory)).map((r) => r.key)).toEqual([
        ['job', 0, 50],
        ['job', 250, 50],
      ]);
      await store.writeBlock('job', 50, pattern(11, 70));
      await store.writeBlock('job', 120, pattern(12, 130));
      await store.writeBlock('job', 10, pattern(13, 50)); // over [0, 50) and [50, 120)
      await store.writeBlock('job', 240, pattern(14, 20)); // inside [120, 250) and [250, 300)
      const stored = await rawRecords(factory);
      expect(stored.map((r) => r.key)).toEqual([
        ['job', 0, 10],
        ['job', 10, 50],
        ['job', 60, 60],
        ['job', 120, 120],
        ['job', 240, 20],
        ['job', 260, 40],
      ]);
      for (const { key, value } of stored) {
        const length = key[2];
        if (records === 'bytes') {
          expect(value).toBeInstanceOf(Uint8Array);
          expect((value as Uint8Array).byteLength).toBe(length);
        } else if (value instanceof Blob) {
          expect(value.size).toBe(length);
        } else {
          // What is left of a cut Blob record: the whole stored Blob and where the part begins.
          const { blob, skip } = value as { blob: unknown; skip: number };
          expect(blob).toBeInstanceOf(Blob);
          expect(skip + length).toBeLessThanOrEqual((blob as Blob).size);
        }
      }
      store.close();
    });

    it(`discardRange trims overlapping ${records} records left by older versions, however far back they start`, async () => {
      const factory = new fake.IDBFactory();
      const store = await openIdbStore({ indexedDB: factory, records });
      const big = pattern(15, 300);
      const small = pattern(16, 50);
      const value = (bytes: Uint8Array): Blob | Uint8Array => (records === 'blob' ? new Blob([bytes as Uint8Array<ArrayBuffer>]) : bytes);
      const db = await rawDb(factory);
      await db.put('blocks', value(big), ['job', 0, 300]);
      await db.put('blocks', value(small), ['job', 50, 50]);
      db.close();

      // [50, 100) ends before the discard: a walk back that trusted disjoint records would stop there.
      await store.discardRange('job', 150, 200);
      expect(await store.storedRanges('job')).toEqual([
        { start: 0, end: 150 },
        { start: 200, end: 300 },
      ]);
      expect((await rawRecords(factory)).map((r) => r.key)).toEqual([
        ['job', 0, 150],
        ['job', 50, 50],
        ['job', 200, 100],
      ]);
      expect(equalBytes(await readAll(store, 'job', 200, 300), big.subarray(200))).toBe(true);
      expect(equalBytes(await readAll(store, 'job', 100, 150), big.subarray(100, 150))).toBe(true);
      store.close();
    });

    for (const how of ['abort', 'throw'] as const) {
      it(`a quota failure (${how}) in the middle of a discard or an overlapping ${records} write changes nothing`, async () => {
        const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), records });
        const content = pattern(17, 300);
        await store.writeBlock('job', 0, content.slice());

        // The first put is the head kept before the discarded range; the delete before it rolls back.
        let undo = failNextPut(how);
        const discard = await store.discardRange('job', 100, 200).catch((error: unknown) => error);
        undo();
        expect(isQuotaError(discard)).toBe(true);

        undo = failNextPut(how);
        const write = await store.writeBlock('job', 250, pattern(18, 100)).catch((error: unknown) => error);
        undo();
        expect(isQuotaError(write)).toBe(true);

        expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 300 }]);
        expect(equalBytes(await readAll(store, 'job', 0, 300), content)).toBe(true);
        store.close();
      });
    }
  }

  for (const records of ['blob', 'bytes'] as const) {
    it(`measures write throughput with ${records} records (64 MiB, fake-indexeddb)`, { timeout: 120_000 }, async () => {
      const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), records });
      const total = 64 * 1024 * 1024;
      const result = await measureStoreThroughput(store, total);
      console.log(`IdbStore (fake-indexeddb, ${records} records): ${result.mbPerSec.toFixed(1)} MB/s write`);
      expect(await store.storedRanges('throughput')).toEqual([{ start: 0, end: total }]);
      expect(await sha256OfStored(store, 'throughput', 0, total)).toBe(result.sha256);
      store.close();
    });
  }
});
