import type { DownloadStore, JobStateRecord } from '../engine';
/** Argument checks and small helpers the browser stores share. */

export function checkOffset(offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`Invalid offset ${offset}`);
}

export function checkRange(start: number, end: number): void {
  checkOffset(start);
  if (!Number.isSafeInteger(end) || end < start) throw new RangeError(`Invalid range [${start}, ${end})`);
}

/** Marks a read-ahead as handled so a consumer that stops early leaves no unhandled rejection. */
export function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** What the browser stores' databases have in common: the jobs' state records in a 'jobs' object store. */
export interface JobsDatabase {
  put(store: 'jobs', value: JobStateRecord, key: string): Promise<unknown>;
  get(store: 'jobs', key: string): Promise<JobStateRecord | undefined>;
  getAllKeys(store: 'jobs'): Promise<string[]>;
}

/** The DownloadStore methods of job state, over a browser store's database. */
export function jobStatesIn(db: JobsDatabase): Pick<DownloadStore, 'saveState' | 'loadState' | 'listJobs'> {
  return {
    saveState: async (jobId, state) => void (await db.put('jobs', state, jobId)),
    loadState: (jobId) => db.get('jobs', jobId),
    listJobs: () => db.getAllKeys('jobs'),
  };
}
