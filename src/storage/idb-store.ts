import { normalizeRanges, type ByteRange, type DownloadStore, type JobStateRecord } from '../engine';
import { checkOffset, checkRange, jobStatesIn, quiet } from './store-args';
import { wrap, type DBSchema, type IDBPDatabase, type IDBPObjectStore, type IDBPTransaction } from 'idb';

/** How block bytes are kept: Blobs (Chrome stores big ones as files) or in-record bytes. */
export type IdbRecordKind = 'blob' | 'bytes';

export interface IdbStoreOptions {
  /** Database name; default 'stitch'. */
  name?: string;
  /** Defaults to the global indexedDB; tests pass a fresh fake factory. */
  indexedDB?: IDBFactory;
  /** Defaults to 'blob' when the database accepts Blob values, else 'bytes'. */
  records?: IdbRecordKind;
}

/** [jobId, offset, length]: sorting by offset lets key ranges find blocks without loading them. */
type BlockKey = [jobId: string, offset: number, length: number];
/**
 * The part of a stored Blob from `skip` on (as long as the key says) that is left after a cut.
 * Firefox stores a slice of a Blob read from IndexedDB as the whole Blob, so its bytes would
 * read back from the start of the original record: a cut keeps the Blob whole and says where
 * its part begins. The cut-off bytes stay on disk until no record refers to the Blob.
 */
interface BlobPart {
  readonly blob: Blob;
  readonly skip: number;
}
type BlockValue = Blob | Uint8Array | BlobPart;

interface StitchDb extends DBSchema {
  blocks: { key: BlockKey; value: BlockValue };
  jobs: { key: string; value: JobStateRecord };
}

type BlocksTransaction = IDBPTransaction<StitchDb, ['blocks'], 'readwrite'>;
type BlocksStore = IDBPObjectStore<StitchDb, ['blocks'], 'blocks', 'readwrite'>;

/** Bytes [from, to) of one record's value. */
interface Piece {
  readonly value: BlockValue;
  readonly from: number;
  readonly to: number;
}

interface Located {
  readonly offset: number;
  readonly length: number;
  readonly value: BlockValue;
}

const DB_VERSION = 1;
/** A non-array key sorts before every [jobId, …] key, so it never shows up in a job's range. */
const PROBE_KEY = 'stitch-blob-probe' as unknown as BlockKey;

export async function openIdbStore(options: IdbStoreOptions = {}): Promise<IdbStore> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const request = factory.open(options.name ?? 'stitch', DB_VERSION);
  request.onupgradeneeded = () => {
    const db = request.result;
    if (!db.objectStoreNames.contains('blocks')) db.createObjectStore('blocks');
    if (!db.objectStoreNames.contains('jobs')) db.createObjectStore('jobs');
  };
  const db = (await wrap(request)) as unknown as IDBPDatabase<StitchDb>;
  // Let a future schema upgrade (another tab/worker) proceed instead of blocking on us.
  db.addEventListener('versionchange', () => db.close());
  const records = options.records ?? ((await acceptsBlobs(db)) ? 'blob' : 'bytes');
  return new IdbStore(db, records);
}

/** Stores and deletes a tiny Blob in one transaction: some engines refuse Blob values. */
async function acceptsBlobs(db: IDBPDatabase<StitchDb>): Promise<boolean> {
  const tx = db.transaction('blocks', 'readwrite');
  try {
    await tx.store.put(new Blob([new Uint8Array(1)]), PROBE_KEY);
    await tx.store.delete(PROBE_KEY);
    await tx.done;
    return true;
  } catch {
    tx.done.catch(() => {});
    return false;
  }
}

/**
 * IndexedDB-backed store for the extension: 4 MiB Blob records, 8 relaxed write transactions in flight.
 * No two records overlap: a write or a discard trims the records it overlaps in its own
 * transaction, so the newest bytes are the only ones stored at any position.
 */
export class IdbStore implements DownloadStore {
  readonly blockSize = 4 * 1024 * 1024;
  /**
   * Write transactions on one object store commit one at a time; more in flight keeps the next
   * Blobs on their way meanwhile. In one `npm run bench:browser` run with the build before this
   * change beside it, Chromium's 1 GiB download phase took about 20 s instead of 25 s (3 runs each).
   * The in-browser probes were mixed (8 beat 4 in 6 of 9 pairs). 16 MiB records × 4 beat 4 MiB
   * × 4 in all 9 probes, yet lost to 4 MiB × 8 in all 3 paired end-to-end runs (1 GiB, Chromium),
   * and would quadruple the engine's buffers. ArrayBuffer values were slower everywhere. The
   * engine buffers (streams + 8) × 4 MiB at most.
   */
  readonly writeConcurrency = 8;

  readonly saveState: DownloadStore['saveState'];
  readonly loadState: DownloadStore['loadState'];
  readonly listJobs: DownloadStore['listJobs'];

  constructor(
    private readonly db: IDBPDatabase<StitchDb>,
    readonly records: IdbRecordKind,
  ) {
    ({ saveState: this.saveState, loadState: this.loadState, listJobs: this.listJobs } = jobStatesIn(db));
  }

  async writeBlock(jobId: string, offset: number, data: Uint8Array): Promise<void> {
    checkOffset(offset);
    if (data.length === 0) return;
    const value = this.records === 'blob' ? new Blob([data as Uint8Array<ArrayBuffer>]) : exactBytes(data);
    // Relaxed durability: the OS has the data once the transaction completes, which survives
    // the browser process dying.
    const tx = this.db.transaction('blocks', 'readwrite', { durability: 'relaxed' });
    const end = offset + data.length;
    await inTransaction(tx, async () => {
      // Records only ever overlap ones written before this rule: walking back may stop early.
      await cutOut(tx.store, jobId, offset, end, 'disjoint');
      tx.store.put(value, [jobId, offset, data.length]).catch(noop);
    });
  }

  async discardRange(jobId: string, start: number, end: number): Promise<void> {
    checkRange(start, end);
    if (start === end) return;
    const tx = this.db.transaction('blocks', 'readwrite');
    // Every key below `end` is checked: records from older versions may overlap each other.
    await inTransaction(tx, () => cutOut(tx.store, jobId, start, end, 'all'));
  }

  async storedRanges(jobId: string): Promise<ByteRange[]> {
    const keys = await this.db.getAllKeys('blocks', jobKeys(jobId));
    return normalizeRanges(keys.map(([, offset, length]) => ({ start: offset, end: offset + length })));
  }

  async *read(jobId: string, start: number, end: number): AsyncIterable<Uint8Array> {
    checkRange(start, end);
    // One block is fetched ahead so IDB work overlaps with the consumer's.
    let pending = start < end ? this.readPiece(jobId, start, end) : undefined;
    while (pending) {
      const piece = await pending;
      pending = piece.end < end ? quiet(this.readPiece(jobId, piece.end, end)) : undefined;
      yield piece.bytes;
    }
  }

  /**
   * Blob slices covering [start, end) in order, for saving a file without reading it into
   * memory. Only for Blob records.
   */
  async readBlobs(jobId: string, start: number, end: number): Promise<Blob[]> {
    checkRange(start, end);
    if (this.records !== 'blob') throw new Error('readBlobs needs Blob records; this store keeps bytes');
    const pieces = (start < end && (await this.adjacentPieces(jobId, start, end))) || (await this.locatePieces(jobId, start, end));
    // A record written in 'bytes' mode by an earlier run still works, at the cost of a copy.
    return pieces.map(({ value, from, to }) => {
      const part = bytesOf(value, from, to);
      return part instanceof Blob ? part : new Blob([part as Uint8Array<ArrayBuffer>]);
    });
  }

  async clearBytes(jobId: string): Promise<void> {
    await this.db.delete('blocks', jobKeys(jobId));
  }

  async deleteJob(jobId: string): Promise<void> {
    const tx = this.db.transaction(['blocks', 'jobs'], 'readwrite');
    // A failed request aborts the transaction: tx.done reports it, so the requests' own
    // rejections are only silenced.
    tx.objectStore('blocks')
      .delete(jobKeys(jobId))
      .catch(() => {});
    tx.objectStore('jobs')
      .delete(jobId)
      .catch(() => {});
    await tx.done;
  }

  close(): void {
    this.db.close();
  }

  /**
   * The pieces of [start, end) when its records follow each other without gap or overlap, as
   * writeBlock leaves them: read in one transaction (a 1 GiB file is 256 records, and a
   * transaction each made saving start late). Undefined otherwise: locatePieces sorts it out.
   */
  private async adjacentPieces(jobId: string, start: number, end: number): Promise<Piece[] | undefined> {
    const tx = this.db.transaction('blocks');
    // The first record is the last one starting at or before `start`.
    const first = await tx.store.openKeyCursor(IDBKeyRange.bound([jobId], [jobId, start, Infinity]), 'prev');
    if (!first) return undefined;
    const range = IDBKeyRange.bound(first.key, [jobId, end], false, true);
    const [keys, values] = await Promise.all([tx.store.getAllKeys(range), tx.store.getAll(range)]);
    const pieces: Piece[] = [];
    let pos = first.key[1];
    for (const [i, [, offset, length]] of keys.entries()) {
      const value = values[i];
      if (offset !== pos || value === undefined) return undefined;
      pieces.push({ value, from: Math.max(start, offset) - offset, to: Math.min(end, offset + length) - offset });
      pos = offset + length;
    }
    return pos >= end ? pieces : undefined;
  }

  /** The pieces of [start, end), each record found by itself: right whatever the records' layout. */
  private async locatePieces(jobId: string, start: number, end: number): Promise<Piece[]> {
    const pieces: Piece[] = [];
    for (let pos = start; pos < end;) {
      const block = await this.locate(jobId, pos);
      const pieceEnd = Math.min(end, block.offset + block.length);
      pieces.push({ value: block.value, from: pos - block.offset, to: pieceEnd - block.offset });
      pos = pieceEnd;
    }
    return pieces;
  }

  private async readPiece(jobId: string, pos: number, end: number): Promise<{ bytes: Uint8Array; end: number }> {
    const block = await this.locate(jobId, pos);
    const pieceEnd = Math.min(end, block.offset + block.length);
    const from = pos - block.offset;
    const to = pieceEnd - block.offset;
    const part = bytesOf(block.value, from, to);
    const bytes = part instanceof Blob ? new Uint8Array(await part.arrayBuffer()) : part;
    return { bytes, end: pieceEnd };
  }

  /**
   * The record holding byte `pos`. Walks keys backwards from the last block starting at or
   * before `pos`: normally the first key covers it; overlapping records of different lengths
   * or a gap make it look further back (keys only, no values are loaded).
   */
  private async locate(jobId: string, pos: number): Promise<Located> {
    const tx = this.db.transaction('blocks');
    const keys = IDBKeyRange.bound([jobId], [jobId, pos, Infinity]);
    for (let cursor = await tx.store.openKeyCursor(keys, 'prev'); cursor; cursor = await cursor.continue()) {
      const [, offset, length] = cursor.key;
      if (offset + length <= pos) continue;
      const value = await tx.store.get(cursor.key);
      if (value !== undefined) return { offset, length, value };
    }
    throw new Error(`Job ${jobId}: byte ${pos} is not stored`);
  }
}

/**
 * Runs `work` (IDB requests only, no other awaits) in `tx` and waits for the commit. A failed
 * request aborts the transaction, and tx.done rejects with the transaction's error: the cause
 * (QuotaExceededError), where the request's own error may be a plain AbortError. Work that
 * throws by itself aborts the transaction, so no half of it is committed, and reports its error.
 */
async function inTransaction(tx: BlocksTransaction, work: () => Promise<void>): Promise<void> {
  let failure: { error: unknown } | undefined;
  let abortedHere = false;
  const working = work().catch((error: unknown) => {
    failure = { error };
    try {
      tx.abort();
      abortedHere = true;
    } catch {
      // Already aborted or committed: tx.done tells which.
    }
  });
  try {
    await tx.done;
  } catch (error) {
    await working;
    throw abortedHere && failure ? failure.error : error;
  }
  await working;
  if (failure) throw failure.error;
}

/**
 * Deletes every record of the job overlapping [start, end) and puts back its parts outside it
 * as records of the same kind (Blobs are not read into memory). 'disjoint' trusts that
 * records do not overlap each other, so the walk back from `end` stops at the first record
 * ending at or before `start`; 'all' checks every key below `end`.
 */
async function cutOut(store: BlocksStore, jobId: string, start: number, end: number, scan: 'disjoint' | 'all'): Promise<void> {
  const below = IDBKeyRange.bound([jobId], [jobId, end], false, true);
  let keys: BlockKey[];
  if (scan === 'all') {
    keys = (await store.getAllKeys(below)).filter(([, offset, length]) => offset + length > start);
  } else {
    keys = [];
    for (let cursor = await store.openKeyCursor(below, 'prev'); cursor; cursor = await cursor.continue()) {
      const [, offset, length] = cursor.key;
      if (offset + length <= start) break;
      keys.push(cursor.key);
    }
  }
  for (const key of keys) {
    const [, offset, length] = key;
    const head = Math.max(0, start - offset); // bytes kept before `start`
    const tail = Math.max(0, offset + length - end); // bytes kept from `end` on
    const value = head > 0 || tail > 0 ? await store.get(key) : undefined;
    store.delete(key).catch(noop);
    if (head === 0 && tail === 0) continue;
    if (value === undefined) throw new Error(`Job ${jobId}: record at ${offset} vanished`);
    if (head > 0) store.put(keptPart(value, 0, head), [jobId, offset, head]).catch(noop);
    if (tail > 0) store.put(keptPart(value, length - tail, length), [jobId, end, tail]).catch(noop);
  }
}

/** The value of a record keeping bytes [from, to) of a cut record: a copy of bytes, never a slice of a stored Blob. */
function keptPart(value: BlockValue, from: number, to: number): BlockValue {
  if (value instanceof Uint8Array) return value.slice(from, to);
  if (value instanceof Blob) return { blob: value, skip: from };
  return { blob: value.blob, skip: value.skip + from };
}

/** Bytes [from, to) of a record's value: a view of in-record bytes, or a Blob slice to read. */
function bytesOf(value: BlockValue, from: number, to: number): Blob | Uint8Array {
  if (value instanceof Uint8Array) return value.subarray(from, to);
  if (value instanceof Blob) return value.slice(from, to);
  return value.blob.slice(value.skip + from, value.skip + to);
}

function noop(): void {}

/** Every block key of one job: arrays sort after numbers, so [jobId, []] is past any offset. */
function jobKeys(jobId: string): IDBKeyRange {
  return IDBKeyRange.bound([jobId], [jobId, []]);
}

/** IDB clones a view's whole buffer; copy when the view is only part of it. */
function exactBytes(data: Uint8Array): Uint8Array {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
}
