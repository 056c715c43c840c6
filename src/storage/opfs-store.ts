import { normalizeRanges, removeRange, type ByteRange, type DownloadStore, type JobStateRecord } from '../engine';
import { wrap, type DBSchema, type IDBPDatabase } from 'idb';
import { CHUNK_BYTES, legacyFile, opfsBytes, opfsRoot, type OpfsDirectory } from './opfs-chunks';
import type { OpfsWriter } from './opfs-files';
import { checkRange, jobStatesIn, quiet } from './store-args';

interface FilesDb extends DBSchema {
  /** Each job's stored ranges, sorted and merged: recorded once their bytes are flushed to its file. */
  ranges: { key: string; value: ByteRange[] };
  jobs: { key: string; value: JobStateRecord };
}

/** The database of the stored ranges and the jobs' state. */
export const OPFS_STORE_DB = 'stitch-files';

export interface OpfsStoreOptions {
  /** Database name; default OPFS_STORE_DB. */
  name?: string;
  /** Defaults to the global indexedDB; tests pass a fresh fake factory. */
  indexedDB?: IDBFactory;
  /** The directory of the jobs' files; default the origin's private one. Tests pass a fake. */
  directory?: () => Promise<OpfsDirectory>;
  /** Default CHUNK_BYTES; the OPFS worker must write chunks of the same size. */
  chunkBytes?: number;
}

/** The background's store (with the worker's writer), or a page's, which only reads (without). */
export async function openOpfsStore(writer: OpfsWriter | undefined, options: OpfsStoreOptions = {}): Promise<OpfsStore> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const request = factory.open(options.name ?? OPFS_STORE_DB, 1);
  request.onupgradeneeded = () => {
    request.result.createObjectStore('ranges');
    request.result.createObjectStore('jobs');
  };
  const db = (await wrap(request)) as unknown as IDBPDatabase<FilesDb>;
  // Let a future schema upgrade (another tab/worker) proceed instead of blocking on us.
  db.addEventListener('versionchange', () => db.close());
  return new OpfsStore(db, writer, options.directory ?? opfsRoot, options.chunkBytes ?? CHUNK_BYTES);
}

/**
 * The browser's store where the origin private file system works: each job's bytes at their
 * offsets in chunk files (opfs-chunks.ts; a job an older version began keeps its one file),
 * written by the OPFS worker and read as File snapshots; its stored ranges and state in
 * IndexedDB. A range is recorded
 * only after its bytes were flushed, and forgotten before anything else happens to them, so a
 * crash never leaves bytes claimed that the file does not hold.
 */
export class OpfsStore implements DownloadStore {
  readonly blockSize = 4 * 1024 * 1024;
  /** The worker writes one block at a time; the next ones wait in its queue (their buffers moved there). */
  readonly writeConcurrency = 4;

  readonly saveState: DownloadStore['saveState'];
  readonly loadState: DownloadStore['loadState'];
  readonly listJobs: DownloadStore['listJobs'];

  constructor(
    private readonly db: IDBPDatabase<FilesDb>,
    private readonly writer: OpfsWriter | undefined,
    private readonly directory: () => Promise<OpfsDirectory> = opfsRoot,
    private readonly chunkBytes = CHUNK_BYTES,
  ) {
    ({ saveState: this.saveState, loadState: this.loadState, listJobs: this.listJobs } = jobStatesIn(db));
  }

  async writeBlock(jobId: string, offset: number, data: Uint8Array): Promise<Uint8Array | undefined> {
    const end = offset + data.length; // the worker takes data's buffer (and gives it back)
    checkRange(offset, end);
    if (data.length === 0) return;
    const returned = await this.written().write(jobId, offset, data);
    await this.changeRanges(jobId, (have) => normalizeRanges([...have, { start: offset, end }]));
    return returned;
  }

  async discardRange(jobId: string, start: number, end: number): Promise<void> {
    checkRange(start, end);
    if (start < end) await this.changeRanges(jobId, (have) => removeRange(have, { start, end }));
  }

  async storedRanges(jobId: string): Promise<ByteRange[]> {
    return (await this.db.get('ranges', jobId)) ?? [];
  }

  async *read(jobId: string, start: number, end: number): AsyncIterable<Uint8Array> {
    checkRange(start, end);
    const missing = await this.firstMissing(jobId, start, end);
    if (missing !== undefined) throw new Error(`Job ${jobId}: byte ${missing} is not stored`);
    // Snapshots taken once the range is stored hold every byte of it.
    const chunk = async (from: number) =>
      new Uint8Array(await (await this.bytes(jobId, from, Math.min(end, from + this.blockSize))).arrayBuffer());
    // One chunk is read ahead so the disk's reads overlap with the consumer's work.
    let pending = start < end ? quiet(chunk(start)) : undefined;
    for (let pos = start; pending;) {
      const bytes = await pending;
      if (bytes.length === 0) throw new Error(`Job ${jobId}: byte ${pos} is not in its file`);
      pos += bytes.length;
      pending = pos < end ? quiet(chunk(pos)) : undefined;
      yield bytes;
    }
  }

  /** [start, end) as slices of the job's files on disk, for saving it without reading it into memory. */
  async readBlobs(jobId: string, start: number, end: number): Promise<Blob[]> {
    checkRange(start, end);
    const missing = await this.firstMissing(jobId, start, end);
    if (missing !== undefined) throw new Error(`Job ${jobId}: byte ${missing} is not stored`);
    // Saving: the download is over, its files are flushed and closed first.
    await this.writer?.release(jobId);
    return [await this.bytes(jobId, start, end)];
  }

  /**
   * Gives back the space of the job's bytes before `offset` that a streamed save handed to the
   * browser's download: deletes the whole chunks that end at or before it, after forgetting their
   * ranges (durably: a crash never claims bytes that are gone). Resolves with where the job's
   * stored bytes may now begin (0: nothing released; a job in one file releases nothing). A job
   * whose save then fails downloads those bytes again, as any missing ones.
   */
  async releaseBefore(jobId: string, offset: number): Promise<number> {
    checkRange(0, offset);
    const before = Math.floor(offset / this.chunkBytes);
    if (before === 0 || (await legacyFile(await this.directory(), jobId))) return 0;
    const end = before * this.chunkBytes;
    await this.changeRanges(jobId, (have) => removeRange(have, { start: 0, end }), 'strict');
    await this.written().drop(jobId, before);
    return end;
  }

  async clearBytes(jobId: string): Promise<void> {
    await this.db.delete('ranges', jobId);
    await this.written().remove(jobId);
  }

  async deleteJob(jobId: string): Promise<void> {
    const tx = this.db.transaction(['ranges', 'jobs'], 'readwrite');
    await Promise.all([tx.objectStore('ranges').delete(jobId), tx.objectStore('jobs').delete(jobId), tx.done]);
    await this.written().remove(jobId);
  }

  close(): void {
    this.db.close();
  }

  private written(): OpfsWriter {
    if (!this.writer) throw new Error('only the background writes downloads; a page only reads them');
    return this.writer;
  }

  private async bytes(jobId: string, start: number, end: number): Promise<Blob> {
    return opfsBytes(await this.directory(), jobId, start, end, this.chunkBytes);
  }

  /**
   * Read, change and write the job's ranges in one transaction: concurrent writes never lose each
   * other's. Relaxed for ranges recorded after their bytes were flushed (a crash forgets them at
   * worst); strict before files are deleted.
   */
  private async changeRanges(
    jobId: string,
    change: (have: ByteRange[]) => ByteRange[],
    durability: IDBTransactionDurability = 'relaxed',
  ): Promise<void> {
    const tx = this.db.transaction('ranges', 'readwrite', { durability });
    const have = (await tx.store.get(jobId)) ?? [];
    await Promise.all([tx.store.put(change(have), jobId), tx.done]);
  }

  private async firstMissing(jobId: string, start: number, end: number): Promise<number | undefined> {
    let pos = start;
    for (const r of await this.storedRanges(jobId)) {
      if (r.start > pos) break;
      pos = Math.max(pos, r.end);
    }
    return pos < end ? pos : undefined;
  }
}
