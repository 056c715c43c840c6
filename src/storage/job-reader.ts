import { openIdbStore } from './idb-store';
import { openOpfsStore, OPFS_STORE_DB } from './opfs-store';
import type { BrowserStore } from './stored-blob-url';

export type JobReader = Pick<BrowserStore, 'read' | 'readBlobs'> & { close(): void };

/**
 * Where a page reads a job's stored bytes: the store the background keeps them in (see
 * openBrowserStore). Pages read the same origin's storage directly: bytes never go through messages.
 */
export async function openJobReader(jobId: string): Promise<JobReader> {
  if ((await indexedDB.databases()).some((db) => db.name === OPFS_STORE_DB)) {
    const opfs = await openOpfsStore(undefined);
    // A job's state, or bytes without one (a live recording's, which is no job).
    if ((await opfs.loadState(jobId)) !== undefined || (await opfs.storedRanges(jobId)).length > 0) return opfs;
    opfs.close();
  }
  return openIdbStore();
}
