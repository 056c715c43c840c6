import type { DownloadStore } from '../engine';

/** Reads a job's bytes as Blob slices of the stored records. */
export type ReadBlobs = (jobId: string, start: number, end: number) => Promise<Blob[]>;

/** A browser's store: the engine's store, and a job's bytes as Blobs to save them without copying. */
export type BrowserStore = DownloadStore & { readBlobs: ReadBlobs };

/**
 * A blob URL of a finished job's stored bytes, built from the stored records as Blob slices
 * (Chrome keeps big records as files: nothing is copied into memory). Throws when the stored
 * bytes are not `size` long. Needs URL.createObjectURL: pages, the offscreen document and
 * Firefox's background page, not Chrome's service worker.
 */
export async function storedBlobUrl(readBlobs: ReadBlobs, jobId: string, size: number, type = 'application/octet-stream'): Promise<string> {
  const blob = new Blob(await readBlobs(jobId, 0, size), { type });
  if (blob.size !== size) throw new Error(`the stored file has ${blob.size} bytes, expected ${size}`);
  return URL.createObjectURL(blob);
}
