import { promises as fs } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileStore } from '../../src/storage/file-store';
import { measureStoreThroughput, sha256OfStored } from '../support/measure-store';
import type { ByteRange } from '../../src/engine/ranges';
import { concat, describeStoreContract, equalBytes, pattern, readAll, type StoreHarness } from '../support/store-contract';

const tempDir = (): Promise<string> => fs.mkdtemp(join(tmpdir(), 'stitch-file-store-'));

/** FileHandle's prototype, to make one write fail like a full disk. */
async function fileHandlePrototype(dir: string): Promise<FileHandle> {
  const handle = await fs.open(join(dir, 'probe'), 'w');
  await handle.close();
  await fs.rm(join(dir, 'probe'));
  return Object.getPrototypeOf(handle) as FileHandle;
}

const harness: StoreHarness<FileStore> & { prototype?: FileHandle } = {
  async open() {
    const dir = await tempDir();
    harness.prototype ??= await fileHandlePrototype(dir);
    return new FileStore(dir);
  },
  async reopen(store) {
    await store.close();
    return new FileStore(store.dir);
  },
  async dispose(store) {
    await store.close();
    await fs.rm(store.dir, { recursive: true, force: true });
  },
  failNextWriteWithQuota() {
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const spy = vi.spyOn(harness.prototype!, 'write').mockRejectedValueOnce(full);
    return () => spy.mockRestore();
  },
};

describeStoreContract('FileStore', harness);

describe('FileStore', () => {
  let dir: string;
  let store: FileStore;
  beforeEach(async () => {
    dir = await tempDir();
    store = new FileStore(dir);
  });
  afterEach(async () => {
    await store.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const statePath = (id: string): string => join(dir, `${id}.stitch-state`);
  const journalLines = async (id: string): Promise<string[]> => (await fs.readFile(statePath(id), 'utf8')).split('\n').filter(Boolean);

  it('writes a sparse data file and a journal of JSON lines', async () => {
    expect(store.blockSize).toBe(256 * 1024);
    expect(store.writeConcurrency).toBe(4);
    await store.saveState('job', { a: 1 });
    await store.writeBlock('job', 2 ** 30, pattern(1, 4));
    expect(store.dataPath('job')).toBe(join(dir, 'job.stitch-part'));
    const stat = await fs.stat(store.dataPath('job'));
    expect(stat.size).toBe(2 ** 30 + 4);
    // Holes take no disk space where the file system supports them.
    if (process.platform !== 'win32') expect(stat.blocks * 512).toBeLessThan(1024 * 1024);
    expect(await journalLines('job')).toEqual(['{"s":{"a":1}}', `{"b":[${2 ** 30},4]}`]);
  });

  it('reads into a lent scratch buffer: every chunk a view of it, consumed before the next', async () => {
    const bytes = pattern(3, 10_000);
    await store.writeBlock('job', 0, bytes);
    const scratch = new Uint8Array(4096);
    const seen: number[] = [];
    for await (const chunk of store.read('job', 100, 10_000, scratch)) {
      expect(chunk.buffer).toBe(scratch.buffer);
      seen.push(...chunk);
    }
    expect(equalBytes(Uint8Array.from(seen), bytes.subarray(100))).toBe(true);
  });

  it('blocks whose writes finish while the journal is busy share one append, one line each', async () => {
    await store.saveState('job', { url: 'u' });
    const appends = vi.spyOn(await fileHandlePrototype(dir), 'appendFile');
    try {
      await Promise.all(Array.from({ length: 32 }, (_, i) => store.writeBlock('job', i * 10, pattern(i, 10))));
      expect(appends.mock.calls.length).toBeLessThan(32);
    } finally {
      appends.mockRestore();
    }
    expect((await journalLines('job')).filter((line) => line.startsWith('{"b"'))).toHaveLength(32);
    const reopened = new FileStore(dir);
    expect(await reopened.storedRanges('job')).toEqual([{ start: 0, end: 320 }]);
    expect(equalBytes(await readAll(reopened, 'job', 0, 320), concat(Array.from({ length: 32 }, (_, i) => pattern(i, 10))))).toBe(true);
    await reopened.close();
  });

  it('a new store on the same directory replays the journal of one that was never closed', async () => {
    await store.saveState('job', { step: 1 });
    await store.writeBlock('job', 0, pattern(2, 100));
    await store.writeBlock('job', 200, pattern(3, 50));
    // No close(): as if the process had been killed.
    const after = new FileStore(dir);
    expect(await after.listJobs()).toEqual(['job']);
    expect(await after.loadState('job')).toEqual({ step: 1 });
    expect(await after.storedRanges('job')).toEqual([
      { start: 0, end: 100 },
      { start: 200, end: 250 },
    ]);
    expect(equalBytes(await readAll(after, 'job', 200, 250), pattern(3, 50))).toBe(true);
    await after.close();
  });

  it('ignores a torn last journal line and keeps appending cleanly after it', async () => {
    await store.saveState('job', { step: 1 });
    await store.writeBlock('job', 0, pattern(4, 100));
    await store.close();
    await fs.appendFile(statePath('job'), '{"b":[100,');

    store = new FileStore(dir);
    expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 100 }]);
    await store.writeBlock('job', 100, pattern(5, 100));
    await store.close();

    store = new FileStore(dir);
    expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 200 }]);
    expect(await store.loadState('job')).toEqual({ step: 1 });
  });

  it('rejects a corrupt line in the middle of the journal with its location', async () => {
    await fs.writeFile(statePath('job'), '{"s":{}}\nnot json\n{"b":[0,1]}\n');
    await expect(store.storedRanges('job')).rejects.toThrow(/job\.stitch-state:2: corrupt journal line/);
  });

  it('compacts a long journal without losing state or ranges', async () => {
    await store.saveState('job', { step: 'first' });
    for (let i = 0; i < 1200; i++) {
      if (i === 600) await store.saveState('job', { step: 'middle' });
      await store.writeBlock('job', i * 10, pattern(i, 10));
    }
    const lines = await journalLines('job');
    expect(lines.length).toBeLessThan(1000);
    await expect(fs.stat(`${statePath('job')}.tmp`)).rejects.toMatchObject({ code: 'ENOENT' });

    const after = new FileStore(dir);
    expect(await after.loadState('job')).toEqual({ step: 'middle' });
    expect(await after.storedRanges('job')).toEqual([{ start: 0, end: 12_000 }]);
    expect(equalBytes(await readAll(after, 'job', 11_990, 12_000), pattern(1199, 10))).toBe(true);
    await after.close();
  });

  it('journals a discard as a d line before it resolves; a no-op discard adds no line', async () => {
    const content = pattern(20, 300);
    await store.writeBlock('job', 0, content.slice());
    await store.discardRange('job', 100, 200);
    await store.discardRange('job', 120, 180); // already forgotten
    await store.discardRange('job', 400, 500); // never stored
    expect(await journalLines('job')).toEqual(['{"b":[0,300]}', '{"d":[100,200]}']);

    // No close(): as if the process had been killed right after the discard resolved.
    const after = new FileStore(dir);
    expect(await after.storedRanges('job')).toEqual([
      { start: 0, end: 100 },
      { start: 200, end: 300 },
    ]);
    const fresh = pattern(21, 100);
    await after.writeBlock('job', 100, fresh);
    await after.close();

    store = new FileStore(dir);
    expect(await store.storedRanges('job')).toEqual([{ start: 0, end: 300 }]);
    const expected = content.slice();
    expected.set(fresh, 100);
    expect(equalBytes(await readAll(store, 'job', 0, 300), expected)).toBe(true);
  });

  it('replays discards in order with the blocks around them', async () => {
    await fs.writeFile(
      statePath('job'),
      ['{"s":{"n":1}}', '{"b":[0,100]}', '{"d":[20,40]}', '{"b":[30,10]}', '{"d":[90,500]}', '{"d":[5,5]}', '{"d":[0,'].join('\n'),
    );
    expect(await store.storedRanges('job')).toEqual([
      { start: 0, end: 20 },
      { start: 30, end: 90 },
    ]);
    expect(await store.loadState('job')).toEqual({ n: 1 });
    // The torn last line was dropped from the file.
    expect((await journalLines('job')).at(-1)).toBe('{"d":[5,5]}');
  });

  it('rejects a discard line whose end is before its start as corrupt', async () => {
    await fs.writeFile(statePath('job'), '{"b":[0,10]}\n{"d":[8,4]}\n');
    await expect(store.storedRanges('job')).rejects.toThrow(/job\.stitch-state:2: corrupt journal line/);
  });

  it('compaction writes the ranges left after discards', async () => {
    await store.saveState('job', { step: 1 });
    for (let i = 0; i < 1200; i++) {
      await store.writeBlock('job', i * 10, pattern(i, 10));
      if (i % 100 === 99) await store.discardRange('job', i * 10 - 5, i * 10 + 5);
    }
    // Holes at [985, 995), [1985, 1995), …, [11985, 11995).
    const ranges: ByteRange[] = [];
    let from = 0;
    for (let k = 0; k < 12; k++) {
      ranges.push({ start: from, end: k * 1000 + 985 });
      from = k * 1000 + 995;
    }
    ranges.push({ start: from, end: 12_000 });
    expect(await store.storedRanges('job')).toEqual(ranges);
    expect((await journalLines('job')).length).toBeLessThan(1000);
    await store.close();

    store = new FileStore(dir);
    expect(await store.storedRanges('job')).toEqual(ranges);
    expect(await store.loadState('job')).toEqual({ step: 1 });
    expect(equalBytes(await readAll(store, 'job', 980, 985), pattern(98, 10).subarray(0, 5))).toBe(true);
    expect(equalBytes(await readAll(store, 'job', 995, 1010), concat([pattern(99, 10).subarray(5), pattern(100, 10)]))).toBe(true);
    await expect(readAll(store, 'job', 984, 986)).rejects.toThrow(/byte 985 is not stored/);

    // Fill the journal to the brim: the discard itself is what gets compacted.
    while ((await journalLines('job')).length < 1000) await store.saveState('job', { step: 2 });
    await store.discardRange('job', 0, 10);
    const after = [{ start: 10, end: 985 }, ...ranges.slice(1)];
    expect(await journalLines('job')).toEqual(['{"s":{"step":2}}', ...after.map((r) => JSON.stringify({ b: [r.start, r.end - r.start] }))]);
    expect(await store.storedRanges('job')).toEqual(after);
    const replayed = new FileStore(dir);
    expect(await replayed.storedRanges('job')).toEqual(after);
    await replayed.close();
  });

  it('after a discard failed to reach the journal, a write rewrites the journal before touching the data file', async () => {
    const proto = await fileHandlePrototype(dir);
    const content = pattern(22, 300);
    await store.writeBlock('job', 0, content.slice());
    const append = vi.spyOn(proto, 'appendFile').mockRejectedValueOnce(new Error('EIO: i/o error, write'));
    try {
      await expect(store.discardRange('job', 100, 200)).rejects.toThrow(/EIO/);
    } finally {
      append.mockRestore();
    }
    // Memory forgot the range at once; the journal still claims it.
    expect(await store.storedRanges('job')).toEqual([
      { start: 0, end: 100 },
      { start: 200, end: 300 },
    ]);

    // The data write of the next block fails: by then the journal must no longer claim [100, 200).
    const write = vi
      .spyOn(proto, 'write')
      .mockRejectedValueOnce(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }));
    try {
      await expect(store.writeBlock('job', 100, pattern(23, 100))).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      write.mockRestore();
    }
    const crashed = new FileStore(dir);
    expect(await crashed.storedRanges('job')).toEqual([
      { start: 0, end: 100 },
      { start: 200, end: 300 },
    ]);
    await crashed.close();

    await store.writeBlock('job', 100, pattern(23, 100));
    const after = new FileStore(dir);
    expect(await after.storedRanges('job')).toEqual([{ start: 0, end: 300 }]);
    expect(equalBytes(await readAll(after, 'job', 100, 200), pattern(23, 100))).toBe(true);
    await after.close();
  });

  it('finish moves the data file to its final path and forgets the job', async () => {
    const content = pattern(6, 3000);
    await store.saveState('job', { done: true });
    await store.writeBlock('job', 1000, content.slice(1000));
    await store.writeBlock('job', 0, content.slice(0, 1000));
    const finalPath = join(dir, 'final.bin');
    await store.finish('job', finalPath);
    expect(equalBytes(await fs.readFile(finalPath), content)).toBe(true);
    await expect(fs.stat(store.dataPath('job'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fs.stat(statePath('job'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await store.listJobs()).toEqual([]);
  });

  it('rejects job ids that are not plain file names', async () => {
    for (const id of ['../escape', 'a/b', 'a\\b', 'nul\0byte', '..', '.', '', 'c:stream']) {
      expect(() => store.dataPath(id)).toThrow(/Unsafe job id/);
      await expect(store.writeBlock(id, 0, pattern(7, 1))).rejects.toThrow(/Unsafe job id/);
      await expect(store.saveState(id, {})).rejects.toThrow(/Unsafe job id/);
      await expect(store.loadState(id)).rejects.toThrow(/Unsafe job id/);
      await expect(store.deleteJob(id)).rejects.toThrow(/Unsafe job id/);
    }
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('a full disk error keeps its code', async () => {
    vi.spyOn(await fileHandlePrototype(dir), 'write').mockRejectedValueOnce(
      Object.assign(new Error('EDQUOT: disk quota exceeded, write'), { code: 'EDQUOT' }),
    );
    await expect(store.writeBlock('job', 0, pattern(8, 10))).rejects.toMatchObject({ code: 'EDQUOT' });
    expect(await store.storedRanges('job')).toEqual([]);
  });

  it('measures write throughput (256 MiB)', { timeout: 120_000 }, async () => {
    const total = 256 * 1024 * 1024;
    const result = await measureStoreThroughput(store, total);
    console.log(`FileStore (${tmpdir()}): ${result.mbPerSec.toFixed(1)} MB/s write`);
    expect(await store.storedRanges('throughput')).toEqual([{ start: 0, end: total }]);
    expect(await sha256OfStored(store, 'throughput', 0, total)).toBe(result.sha256);
  });
});
