import { IDBFactory } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { ChunkFiles } from '../../../src/storage/opfs-chunk-files';
import { chunkPieces } from '../../../src/storage/opfs-chunks';
import { OpfsWriter } from '../../../src/storage/opfs-files';
import { chunkFileName, chunkIndexOf, type OpfsReply, type OpfsRequest } from '../../../src/storage/opfs-protocol';
import { openOpfsStore, type OpfsStore } from '../../../src/storage/opfs-store';
import { useFakeIdbGlobals } from '../../support/fake-idb-globals';
import { FakeOpfs } from './fake-opfs';

useFakeIdbGlobals();

const CHUNK = 16;
const JOB = 'job-1';

/** An OpfsStore over `dir` with 16-byte chunks, its writer served by ChunkFiles as the OPFS worker does. */
async function storeOver(dir: FakeOpfs, seen: OpfsRequest[] = [], before?: (request: OpfsRequest) => Promise<void>): Promise<OpfsStore> {
  const files = new ChunkFiles(async () => dir, CHUNK);
  const channel = new MessageChannel();
  let queue = Promise.resolve();
  channel.port2.onmessage = ({ data: request }: MessageEvent<OpfsRequest>) => {
    seen.push(request);
    queue = queue.then(async () => {
      await before?.(request);
      let reply: OpfsReply = { id: request.id, ok: true };
      try {
        if (request.op === 'write') await files.write(request.job, request.offset, request.data);
        else if (request.op === 'release') await files.release(request.job);
        else if (request.op === 'remove') await files.remove(request.job);
        else await files.drop(request.job, request.before);
      } catch (error) {
        reply = { id: request.id, ok: false, name: (error as Error).name, message: (error as Error).message };
      }
      channel.port2.postMessage(reply);
    });
  };
  channel.port1.start();
  return openOpfsStore(new OpfsWriter(channel.port1), { indexedDB: new IDBFactory(), directory: async () => dir, chunkBytes: CHUNK });
}

const bytes = (start: number, end: number) => Uint8Array.from({ length: end - start }, (_, i) => (start + i) % 251);

async function readAll(store: OpfsStore, start: number, end: number): Promise<number[]> {
  const out: number[] = [];
  for await (const chunk of store.read(JOB, start, end)) out.push(...chunk);
  return out;
}

describe('chunk files', () => {
  it('splits a write at chunk boundaries', () => {
    expect(chunkPieces(10, 30, 16)).toEqual([
      { index: 0, at: 10, start: 0, end: 6 },
      { index: 1, at: 0, start: 6, end: 22 },
      { index: 2, at: 0, start: 22, end: 30 },
    ]);
    expect(chunkPieces(32, 16, 16)).toEqual([{ index: 2, at: 0, start: 0, end: 16 }]);
  });

  it('names chunks `<job>.<index>.bytes` of valid job ids only, and knows them back', () => {
    expect(chunkFileName(JOB, 3)).toBe('job-1.3.bytes');
    expect(() => chunkFileName('../etc', 0)).toThrow(/invalid job id/);
    expect(() => chunkFileName(JOB, -1)).toThrow(/invalid chunk index/);
    expect(chunkIndexOf(JOB, 'job-1.12.bytes')).toBe(12);
    expect(chunkIndexOf(JOB, 'job-1.bytes')).toBeUndefined();
    expect(chunkIndexOf(JOB, 'job-1.01.bytes')).toBeUndefined();
    expect(chunkIndexOf(JOB, 'job-12.0.bytes')).toBeUndefined();
  });

  it('writes a block that straddles chunks into both, and reads and saves across them', async () => {
    const dir = new FakeOpfs();
    const store = await storeOver(dir);
    await store.writeBlock(JOB, 0, bytes(0, 10));
    await store.writeBlock(JOB, 10, bytes(10, 40)); // chunks 0, 1 and 2
    expect(dir.listing()).toEqual([
      ['job-1.0.bytes', 16],
      ['job-1.1.bytes', 16],
      ['job-1.2.bytes', 8],
    ]);
    expect(await readAll(store, 0, 40)).toEqual([...bytes(0, 40)]);
    expect(await readAll(store, 14, 35)).toEqual([...bytes(14, 35)]);
    const blobs = await store.readBlobs(JOB, 5, 40);
    expect([...new Uint8Array(await new Blob(blobs).arrayBuffer())]).toEqual([...bytes(5, 40)]);
    store.close();
  });

  it('removes every chunk of the job, and no other job’s file', async () => {
    const dir = new FakeOpfs();
    const store = await storeOver(dir);
    await store.writeBlock(JOB, 0, bytes(0, 50));
    await store.writeBlock('job-2', 0, bytes(0, 20));
    await store.clearBytes(JOB);
    expect(dir.listing().map(([name]) => name)).toEqual(['job-2.0.bytes', 'job-2.1.bytes']);
    expect(await store.storedRanges(JOB)).toEqual([]);
    await store.deleteJob('job-2');
    expect(dir.listing()).toEqual([]);
    store.close();
  });

  it('keeps a job an older version began in its one file: written, read and removed there, never released', async () => {
    const dir = new FakeOpfs();
    dir.files.set('job-1.bytes', bytes(0, 20)); // the old layout
    const store = await storeOver(dir);
    await store.writeBlock(JOB, 0, bytes(0, 20)); // its ranges as the old version recorded them
    await store.writeBlock(JOB, 20, bytes(20, 45));
    expect(dir.listing()).toEqual([['job-1.bytes', 45]]);
    expect(await readAll(store, 0, 45)).toEqual([...bytes(0, 45)]);
    expect(await store.releaseBefore(JOB, 40)).toBe(0);
    expect(await store.storedRanges(JOB)).toEqual([{ start: 0, end: 45 }]);
    await store.deleteJob(JOB);
    expect(dir.listing()).toEqual([]);
    store.close();
  });

  it('a read of a chunk that is gone fails, never returns short', async () => {
    const dir = new FakeOpfs();
    const store = await storeOver(dir);
    await store.writeBlock(JOB, 0, bytes(0, 40));
    dir.files.delete('job-1.1.bytes');
    await expect(readAll(store, 0, 40)).rejects.toThrow(/byte 16 is not in its files/);
    store.close();
  });
});

describe('releaseBefore', () => {
  it('deletes the whole chunks before the offset and forgets their ranges first', async () => {
    const dir = new FakeOpfs();
    const seen: OpfsRequest[] = [];
    let rangesAtDrop: unknown;
    const opened: { store?: OpfsStore } = {};
    const store = (opened.store = await storeOver(dir, seen, async (request) => {
      if (request.op === 'drop') rangesAtDrop = await opened.store!.storedRanges(JOB);
    }));
    await store.writeBlock(JOB, 0, bytes(0, 60));
    expect(await store.releaseBefore(JOB, 40)).toBe(32); // chunks 0 and 1 end at or before 40
    expect(rangesAtDrop).toEqual([{ start: 32, end: 60 }]);
    expect(seen.filter((r) => r.op === 'drop')).toMatchObject([{ op: 'drop', job: JOB, before: 2 }]);
    expect(dir.listing()).toEqual([
      ['job-1.2.bytes', 16],
      ['job-1.3.bytes', 12],
    ]);
    expect(await store.storedRanges(JOB)).toEqual([{ start: 32, end: 60 }]);
    expect(await readAll(store, 32, 60)).toEqual([...bytes(32, 60)]);
    await expect(readAll(store, 0, 60)).rejects.toThrow(/byte 0 is not stored/);
    await expect(store.readBlobs(JOB, 0, 60)).rejects.toThrow(/byte 0 is not stored/);
    // Less than a chunk more: nothing; the rest once the offset passes its end.
    expect(await store.releaseBefore(JOB, 47)).toBe(32);
    expect(await store.releaseBefore(JOB, 60)).toBe(48);
    expect(dir.listing()).toEqual([['job-1.3.bytes', 12]]);
    // Released bytes fetched again land in new chunk files, and read as before.
    await store.writeBlock(JOB, 0, bytes(0, 48));
    expect(await readAll(store, 0, 60)).toEqual([...bytes(0, 60)]);
    store.close();
  });

  it('releases nothing before the first chunk ends', async () => {
    const dir = new FakeOpfs();
    const store = await storeOver(dir);
    await store.writeBlock(JOB, 0, bytes(0, 30));
    expect(await store.releaseBefore(JOB, 15)).toBe(0);
    expect(dir.listing()).toHaveLength(2);
    expect(await store.storedRanges(JOB)).toEqual([{ start: 0, end: 30 }]);
    store.close();
  });
});

describe('ChunkFiles', () => {
  it('keeps at most a few handles of a job open, closing the least recently used', async () => {
    const dir = new FakeOpfs();
    const closed: string[] = [];
    const original = dir.getFileHandle.bind(dir);
    dir.getFileHandle = async (name, options) => {
      const handle = await original(name, options);
      const create = (handle as unknown as { createSyncAccessHandle: () => Promise<{ close(): void }> }).createSyncAccessHandle;
      return Object.assign(handle, {
        createSyncAccessHandle: async () => Object.assign(await create(), { close: () => closed.push(name) }),
      });
    };
    const files = new ChunkFiles(async () => dir, CHUNK, 2);
    await files.write(JOB, 0, bytes(0, 16));
    await files.write(JOB, 16, bytes(16, 32));
    await files.write(JOB, 0, bytes(0, 4)); // chunk 0 used again: chunk 1 is now the oldest
    await files.write(JOB, 32, bytes(32, 48));
    expect(closed).toEqual(['job-1.1.bytes']);
    await files.release(JOB);
    expect(closed.sort()).toEqual(['job-1.0.bytes', 'job-1.1.bytes', 'job-1.2.bytes']);
  });
});
