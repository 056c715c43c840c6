/**
 * Bundled into a loopback page (see idb-store.test.ts): runs CUTS through the real IdbStore on
 * the browser's IndexedDB, reopens it, and reports what it reads back. With `legacyWrites`, the
 * first writes are planted as a version-1 database's records (every record in one store), which
 * IdbStore upgrades on opening.
 */
import { openIdbStore } from '../../../src/storage/idb-store';
import { CUTS, writeBytes, type Cut } from './idb-cuts';

export interface ReadBack {
  records: string;
  ranges: { start: number; end: number }[];
  /** SHA-256 (hex) of each stored range, read with read() and with readBlobs(). */
  read: string[];
  blobs: string[];
}

export async function runCuts(legacyWrites = 0): Promise<ReadBack> {
  const name = `cuts-${Date.now()}-${legacyWrites}`;
  if (legacyWrites > 0) await versionOne(name, CUTS.slice(0, legacyWrites));
  const first = await openIdbStore({ name });
  for (const cut of CUTS.slice(legacyWrites)) {
    if (cut.kind === 'write') await first.writeBlock('job', cut.offset, writeBytes(cut));
    else await first.discardRange('job', cut.start, cut.end);
  }
  first.close();
  // Reopened: what is read comes from the database, not from objects the page still holds.
  const store = await openIdbStore({ name });
  const ranges = await store.storedRanges('job');
  const read: string[] = [];
  const blobs: string[] = [];
  for (const { start, end } of ranges) {
    const parts: Uint8Array[] = [];
    for await (const chunk of store.read('job', start, end)) parts.push(chunk);
    read.push(await sha256(new Blob(parts as Uint8Array<ArrayBuffer>[])));
    blobs.push(await sha256(new Blob(await store.readBlobs('job', start, end))));
  }
  store.close();
  return { records: store.records, ranges, read, blobs };
}

/** A version-1 database: 'blocks' and 'jobs', the writes as Blob records in 'blocks'. */
async function versionOne(name: string, writes: readonly Cut[]): Promise<void> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () => {
      open.result.createObjectStore('blocks');
      open.result.createObjectStore('jobs');
    };
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error ?? new Error('indexedDB.open failed'));
  });
  const tx = db.transaction('blocks', 'readwrite');
  for (const cut of writes) {
    if (cut.kind !== 'write') throw new Error('a version-1 database holds only writes here');
    tx.objectStore('blocks').put(new Blob([writeBytes(cut) as Uint8Array<ArrayBuffer>]), ['job', cut.offset, cut.length]);
  }
  await new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? new Error('the transaction was aborted'));
  });
  db.close();
}

async function sha256(blob: Blob): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', await blob.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
