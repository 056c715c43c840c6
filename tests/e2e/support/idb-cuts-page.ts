/**
 * Bundled into a loopback page (see idb-store.test.ts): runs CUTS through a real browser store
 * (IdbStore on the browser's IndexedDB, or OpfsStore on its private file system through the
 * OPFS worker served at /opfs-worker.js), reopens it, and reports what it reads back.
 */
import { openIdbStore } from '../../../src/storage/idb-store';
import { OpfsWriter } from '../../../src/storage/opfs-files';
import { openOpfsStore } from '../../../src/storage/opfs-store';
import type { BrowserStore } from '../../../src/storage/stored-blob-url';
import { CUTS, writeBytes } from './idb-cuts';

type Opened = BrowserStore & { close(): void; records?: string };

export interface ReadBack {
  records: string;
  ranges: { start: number; end: number }[];
  /** SHA-256 (hex) of each stored range, read with read() and with readBlobs(). */
  read: string[];
  blobs: string[];
}

export function runCuts(): Promise<ReadBack> {
  const name = `cuts-${Date.now()}`;
  return cutAndReadBack(() => openIdbStore({ name }));
}

export function runOpfsCuts(): Promise<ReadBack> {
  const name = `cuts-${Date.now()}`;
  const writer = new OpfsWriter(new Worker('/opfs-worker.js', { type: 'module' }));
  return cutAndReadBack(() => openOpfsStore(writer, { name }));
}

async function cutAndReadBack(open: () => Promise<Opened>): Promise<ReadBack> {
  const first = await open();
  for (const cut of CUTS) {
    if (cut.kind === 'write') await first.writeBlock('job', cut.offset, writeBytes(cut));
    else await first.discardRange('job', cut.start, cut.end);
  }
  first.close();
  // Reopened: what is read comes from the database, not from objects the page still holds.
  const store = await open();
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
  return { records: store.records ?? 'file', ranges, read, blobs };
}

async function sha256(blob: Blob): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', await blob.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
