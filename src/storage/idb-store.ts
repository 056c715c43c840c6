import { normalizeRanges, type ByteRange, type DownloadStore, type JobStateRecord } from '../engine';
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
  /**
   * Bytes per stripe (see IdbStore); default the block size. Part of the database's layout:
   * only tests change it, on databases of their own.
   */
  stripeBytes?: number;
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

/**
 * The object stores block records are spread over: stripe k of a job lives in SHARDS[k % 4].
 * Write transactions on one object store commit one at a time; on different stores they run
 * at once. `npm run bench:browser -- --skip-downloads --only chromium --idb-variants 1,7,8`
 * (4 MiB Blobs, 8 transactions in flight) measured 197 MB/s into one store and 395 into four in
 * Chrome's service worker, 189 and 214–402 in an extension page; Firefox (about 500) gained nothing.
 */
const SHARDS = ['blocks', 'blocks-1', 'blocks-2', 'blocks-3'] as const;
type Shard = (typeof SHARDS)[number];

interface StitchDb extends DBSchema {
  blocks: { key: BlockKey; value: BlockValue };
  'blocks-1': { key: BlockKey; value: BlockValue };
  'blocks-2': { key: BlockKey; value: BlockValue };
  'blocks-3': { key: BlockKey; value: BlockValue };
  jobs: { key: string; value: JobStateRecord };
}

type BlocksTransaction = IDBPTransaction<StitchDb, Shard[], 'readwrite'>;
type BlocksStore = IDBPObjectStore<StitchDb, Shard[], Shard, 'readwrite'>;

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

/** 1: every record in `blocks`. 2: records cut at stripes, spread over SHARDS. */
const DB_VERSION = 2;
/** A non-array key sorts before every [jobId, …] key, so it never shows up in a job's range. */
const PROBE_KEY = 'stitch-blob-probe' as unknown as BlockKey;

export async function openIdbStore(options: IdbStoreOptions = {}): Promise<IdbStore> {
  const factory = options.indexedDB ?? globalThis.indexedDB;
  const stripe = options.stripeBytes ?? BLOCK_BYTES;
  const request = factory.open(options.name ?? 'stitch', DB_VERSION);
  request.onupgradeneeded = (event) => {
    const db = request.result;
    for (const name of [...SHARDS, 'jobs']) if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
    if (event.oldVersion === 1) restripe(request.transaction!, stripe);
  };
  const db = (await wrap(request)) as unknown as IDBPDatabase<StitchDb>;
  // Let a future schema upgrade (another tab/worker) proceed instead of blocking on us.
  db.addEventListener('versionchange', () => db.close());
  const records = options.records ?? ((await acceptsBlobs(db)) ? 'blob' : 'bytes');
  return new IdbStore(db, records, stripe);
}

const BLOCK_BYTES = 4 * 1024 * 1024;

/** Where one record, or one part of a range, lies: its stripe's first byte and object store. */
interface StripePart {
  readonly start: number;
  readonly end: number;
  readonly stripeStart: number;
  readonly shard: Shard;
}

/** [start, end) cut at stripe boundaries, in order. */
function stripeParts(start: number, end: number, stripe: number): StripePart[] {
  const parts: StripePart[] = [];
  for (let pos = start; pos < end;) {
    const index = Math.floor(pos / stripe);
    const partEnd = Math.min(end, (index + 1) * stripe);
    parts.push({ start: pos, end: partEnd, stripeStart: index * stripe, shard: SHARDS[index % SHARDS.length]! });
    pos = partEnd;
  }
  return parts;
}

/**
 * Upgrades a version-1 database in its upgrade transaction: the bytes every position reads
 * (from the record with the greatest key covering it, as `locate` chose) become disjoint
 * records, cut at stripes, each in its stripe's store. Records already in place stay untouched;
 * Blob values are moved as references, never read.
 */
function restripe(tx: IDBTransaction, stripe: number): void {
  const blocks = tx.objectStore('blocks');
  const keysRequest = blocks.getAllKeys();
  keysRequest.onsuccess = () => {
    const moves = restripePlan(keysRequest.result as BlockKey[], stripe);
    // One record at a time, so byte records never fill memory. In key order: a part may take the
    // key of a record it hides, which sorts before it, so that record is deleted first.
    const move = (i: number): void => {
      if (i === moves.length) return;
      const { key, parts } = moves[i]!;
      const get = blocks.get(key);
      get.onsuccess = () => {
        const value = get.result as BlockValue | undefined;
        blocks.delete(key);
        if (value !== undefined) for (const part of parts) tx.objectStore(part.shard).put(keptPart(value, part.from, part.to), part.key);
        move(i + 1);
      };
    };
    move(0);
  };
}

/** A version-1 record that moves, and the parts of it that are still read, with their new keys. */
interface Move {
  readonly key: BlockKey;
  readonly parts: { key: BlockKey; shard: Shard; from: number; to: number }[];
}

/** Which version-1 records must move or go so that records are disjoint, cut at stripes, in their stripe's store. */
function restripePlan(keys: readonly BlockKey[], stripe: number): Move[] {
  // Later keys win where they overlap earlier ones: walking in key order, each record cuts what it covers.
  const visible: { key: BlockKey; start: number; end: number }[] = [];
  const sorted = [...keys].sort(compareKeys);
  for (const key of sorted) {
    const [jobId, offset, length] = key;
    const end = offset + length;
    let i = visible.length;
    while (i > 0 && visible[i - 1]!.key[0] === jobId && visible[i - 1]!.end > offset) i--;
    const kept = visible
      .splice(i)
      .flatMap((v) => [
        ...(v.start < offset ? [{ ...v, end: Math.min(v.end, offset) }] : []),
        ...(v.end > end ? [{ ...v, start: Math.max(v.start, end) }] : []),
      ]);
    visible.push(...kept.filter((v) => v.end <= offset), { key, start: offset, end }, ...kept.filter((v) => v.start >= end));
  }
  const partsOf = new Map<BlockKey, Move['parts']>(sorted.map((key) => [key, []]));
  for (const v of visible) {
    const [jobId, offset] = v.key;
    for (const part of stripeParts(v.start, v.end, stripe)) {
      const key: BlockKey = [jobId, part.start, part.end - part.start];
      partsOf.get(v.key)!.push({ key, shard: part.shard, from: part.start - offset, to: part.end - offset });
    }
  }
  const inPlace = (key: BlockKey, parts: Move['parts']) =>
    parts.length === 1 && parts[0]!.shard === 'blocks' && compareKeys(parts[0]!.key, key) === 0;
  return [...partsOf].filter(([key, parts]) => !inPlace(key, parts)).map(([key, parts]) => ({ key, parts }));
}

function compareKeys(a: BlockKey, b: BlockKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] - b[1] || a[2] - b[2];
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
 * IndexedDB-backed store for the extension: 4 MiB Blob records, 8 relaxed write transactions in
 * flight, spread over four object stores so that they commit in parallel. A job's bytes are cut
 * into stripes of the block size; stripe k lives in store k % 4, and no record crosses a stripe,
 * so a write touches only its stripes' stores. No two records overlap: a write or a discard trims
 * the records it overlaps in its own transaction, so the newest bytes are the only ones stored at
 * any position.
 */
export class IdbStore implements DownloadStore {
  readonly blockSize = BLOCK_BYTES;
  /**
   * More transactions in flight keep the next Blobs on their way while others commit. In one
   * `npm run bench:browser` run with the build before this change beside it, Chromium's 1 GiB
   * download phase took about 20 s instead of 25 s (3 runs each; one object store then).
   * 16 MiB records × 4 beat 4 MiB × 4 in all 9 probes, yet lost to 4 MiB × 8 in all 3 paired
   * end-to-end runs (1 GiB, Chromium), and would quadruple the engine's buffers. ArrayBuffer
   * values were slower everywhere. The engine buffers (streams + 8) × 4 MiB at most.
   */
  readonly writeConcurrency = 8;

  constructor(
    private readonly db: IDBPDatabase<StitchDb>,
    readonly records: IdbRecordKind,
    private readonly stripe = BLOCK_BYTES,
  ) {}

  async writeBlock(jobId: string, offset: number, data: Uint8Array): Promise<void> {
    checkOffset(offset);
    if (data.length === 0) return;
    const parts = stripeParts(offset, offset + data.length, this.stripe);
    const values = parts.map(({ start, end }) => this.valueOf(data.subarray(start - offset, end - offset)));
    // Relaxed durability: the OS has the data once the transaction completes, which survives
    // the browser process dying.
    const tx = this.db.transaction(shardsOf(parts), 'readwrite', { durability: 'relaxed' });
    await inTransaction(tx, async () => {
      for (const [i, part] of parts.entries()) {
        const store = tx.objectStore(part.shard);
        // Records only ever overlap ones written before this rule: walking back may stop early.
        await cutOut(store, jobId, part, 'disjoint');
        store.put(values[i]!, [jobId, part.start, part.end - part.start]).catch(noop);
      }
    });
  }

  async discardRange(jobId: string, start: number, end: number): Promise<void> {
    checkRange(start, end);
    if (start === end) return;
    // One cut per store: records never cross stripes, so none overlapping [start, end) begins
    // before the first stripe. Every key from there is checked: records from older versions
    // may overlap each other.
    const first = Math.floor(start / this.stripe);
    const shards = stripeParts(start, Math.min(end, (first + SHARDS.length) * this.stripe), this.stripe);
    const tx = this.db.transaction(shardsOf(shards), 'readwrite');
    const stripeStart = first * this.stripe;
    await inTransaction(tx, async () => {
      for (const { shard } of shards) await cutOut(tx.objectStore(shard), jobId, { start, end, stripeStart }, 'all');
    });
  }

  async storedRanges(jobId: string): Promise<ByteRange[]> {
    const tx = this.db.transaction([...SHARDS]);
    const keys = (await Promise.all(SHARDS.map((shard) => tx.objectStore(shard).getAllKeys(jobKeys(jobId))))).flat();
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

  async saveState(jobId: string, state: JobStateRecord): Promise<void> {
    await this.db.put('jobs', state, jobId);
  }

  async loadState(jobId: string): Promise<JobStateRecord | undefined> {
    return this.db.get('jobs', jobId);
  }

  async listJobs(): Promise<string[]> {
    return this.db.getAllKeys('jobs');
  }

  async clearBytes(jobId: string): Promise<void> {
    const tx = this.db.transaction([...SHARDS], 'readwrite');
    // A failed request aborts the transaction: tx.done reports it.
    for (const shard of SHARDS) tx.objectStore(shard).delete(jobKeys(jobId)).catch(noop);
    await tx.done;
  }

  async deleteJob(jobId: string): Promise<void> {
    const tx = this.db.transaction([...SHARDS, 'jobs' as const], 'readwrite');
    // A failed request aborts the transaction: tx.done reports it, so the requests' own
    // rejections are only silenced.
    for (const shard of SHARDS) tx.objectStore(shard).delete(jobKeys(jobId)).catch(noop);
    tx.objectStore('jobs').delete(jobId).catch(noop);
    await tx.done;
  }

  close(): void {
    this.db.close();
  }

  private valueOf(bytes: Uint8Array): BlockValue {
    return this.records === 'blob' ? new Blob([bytes as Uint8Array<ArrayBuffer>]) : exactBytes(bytes);
  }

  /**
   * The pieces of [start, end) when its records follow each other without gap or overlap, as
   * writeBlock leaves them: read in one transaction (a 1 GiB file is 256 records, and a
   * transaction each made saving start late). Undefined otherwise: locatePieces sorts it out.
   */
  private async adjacentPieces(jobId: string, start: number, end: number): Promise<Piece[] | undefined> {
    const tx = this.db.transaction([...SHARDS]);
    // No record crosses a stripe: the first one holding `start` begins in start's stripe.
    const range = IDBKeyRange.bound([jobId, Math.floor(start / this.stripe) * this.stripe], [jobId, end], false, true);
    const records = (
      await Promise.all(
        SHARDS.map(async (shard) => {
          const store = tx.objectStore(shard);
          const [keys, values] = await Promise.all([store.getAllKeys(range), store.getAll(range)]);
          return keys.map((key, i) => ({ key, value: values[i] }));
        }),
      )
    )
      .flat()
      .filter(({ key: [, offset, length] }) => offset + length > start)
      .sort((a, b) => compareKeys(a.key, b.key));
    const pieces: Piece[] = [];
    let pos = records[0]?.key[1];
    if (pos === undefined || pos > start) return undefined;
    for (const { key, value } of records) {
      const [, offset, length] = key;
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
   * The record holding byte `pos`. Walks keys backwards in pos's stripe from the last block
   * starting at or before `pos`: normally the first key covers it; overlapping records of
   * different lengths or a gap make it look further back (keys only, no values are loaded).
   */
  private async locate(jobId: string, pos: number): Promise<Located> {
    const [{ stripeStart, shard }] = stripeParts(pos, pos + 1, this.stripe) as [StripePart];
    const tx = this.db.transaction(shard);
    const keys = IDBKeyRange.bound([jobId, stripeStart], [jobId, pos, Infinity]);
    for (let cursor = await tx.store.openKeyCursor(keys, 'prev'); cursor; cursor = await cursor.continue()) {
      const [, offset, length] = cursor.key;
      if (offset + length <= pos) continue;
      const value = await tx.store.get(cursor.key);
      if (value !== undefined) return { offset, length, value };
    }
    throw new Error(`Job ${jobId}: byte ${pos} is not stored`);
  }
}

/** The object stores of `parts`, each once. */
function shardsOf(parts: readonly StripePart[]): Shard[] {
  return [...new Set(parts.map((p) => p.shard))];
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
 * Deletes every record of the job in `store` overlapping [start, end) and puts back its parts
 * outside it as records of the same kind (Blobs are not read into memory). Records start at or
 * after `stripeStart`. 'disjoint' trusts that records do not overlap each other, so the walk
 * back from `end` stops at the first record ending at or before `start`; 'all' checks every
 * key from `stripeStart` to `end`.
 */
async function cutOut(
  store: BlocksStore,
  jobId: string,
  { start, end, stripeStart }: Pick<StripePart, 'start' | 'end' | 'stripeStart'>,
  scan: 'disjoint' | 'all',
): Promise<void> {
  const below = IDBKeyRange.bound([jobId, stripeStart], [jobId, end], false, true);
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

/** Marks a prefetch as handled so a consumer that stops early leaves no unhandled rejection. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

function checkOffset(offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`Invalid offset ${offset}`);
}

function checkRange(start: number, end: number): void {
  checkOffset(start);
  if (!Number.isSafeInteger(end) || end < start) throw new RangeError(`Invalid range [${start}, ${end})`);
}
