import { deleteDB } from 'idb';
import { openIdbStore } from '../storage/idb-store';
import { OpfsWriter } from '../storage/opfs-files';
import { openOpfsStore } from '../storage/opfs-store';
import { moveJobs } from '../storage/move-jobs';
import type { BrowserStore } from '../storage/stored-blob-url';

/** The job id the OPFS check writes to and removes: never a real job's (those are UUIDs). */
const CHECK_JOB = 'stitch-opfs-check';

/**
 * Firefox's event page keeps bytes in the origin private file system, through a worker: on this
 * machine it wrote 1 GiB at 300–1000 MB/s and saved it at 320 MB/s, where IndexedDB wrote
 * 175–230 and saved 77–150 (a Blob URL of its records). Jobs an older version kept in IndexedDB
 * move over once. Chrome's service worker cannot start a worker: it keeps IndexedDB, as does any
 * browser where OPFS fails.
 */
export async function openBrowserStore(): Promise<BrowserStore> {
  const opfs = await openOpfs().catch((error: unknown) => {
    console.warn('Stitch: the private file system does not work here; keeping downloads in IndexedDB', error);
    return undefined;
  });
  if (!opfs) return openIdbStore();
  if ((await indexedDB.databases()).some((db) => db.name === 'stitch')) {
    const idb = await openIdbStore();
    await moveJobs(idb, opfs);
    idb.close();
    // Every job moved: the empty database would only be opened again at each start.
    await deleteDB('stitch');
  }
  return opfs;
}

async function openOpfs(): Promise<BrowserStore | undefined> {
  if (typeof Worker !== 'function' || typeof navigator.storage?.getDirectory !== 'function') return undefined;
  const writer = new OpfsWriter(new Worker('opfs-worker.js', { type: 'module' }));
  await writer.write(CHECK_JOB, 0, new Uint8Array(1));
  await writer.remove(CHECK_JOB);
  return openOpfsStore(writer);
}
