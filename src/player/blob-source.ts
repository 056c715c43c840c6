import { openJobReader } from '../storage/job-reader';
import { storedBlobUrl } from '../storage/stored-blob-url';

/**
 * A blob URL of the complete file, built from the stored records as Blob slices (Chrome keeps
 * big records as files: nothing is copied into memory). Used when progressive playback is not
 * possible, once the download is complete. The page reads the extension's storage directly
 * (same origin as the background): bytes never go through messages.
 */
export async function completeFileUrl(jobId: string, size: number, type: string): Promise<{ url: string; revoke: () => void }> {
  const store = await openJobReader(jobId);
  try {
    const url = await storedBlobUrl((id, start, end) => store.readBlobs(id, start, end), jobId, size, type);
    return { url, revoke: () => URL.revokeObjectURL(url) };
  } finally {
    store.close();
  }
}
