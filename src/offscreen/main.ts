import { openIdbStore, type IdbStore } from '../storage/idb-store';
import { storedBlobUrl } from '../storage/stored-blob-url';
import { isOffscreenRequest, type OffscreenReply, type OffscreenRequest } from './protocol';

/**
 * Chrome's offscreen document (reason BLOBS): builds a Blob from a job's stored Blob records
 * and returns a blob URL for downloads.download. `new Blob(storedBlobs)` references the
 * records' files on disk, so the file is never copied into memory. It also holds the frames
 * of streamed saves (the worker answers their navigation with the job's bytes as they come).
 */
let store: Promise<IdbStore> | undefined;
/** Frames of streamed saves: a navigation to the worker's save URL becomes a browser download. */
const frames = new Map<string, HTMLIFrameElement>();

async function handle(request: OffscreenRequest): Promise<OffscreenReply> {
  if (request.type === 'open-frame') {
    const frame = document.createElement('iframe');
    frame.src = request.url;
    frames.set(request.url, frame);
    document.body.append(frame);
    return { ok: true };
  }
  if (request.type === 'close-frame') {
    frames.get(request.url)?.remove();
    frames.delete(request.url);
    return { ok: true };
  }
  if (request.type === 'revoke-blob-url') {
    URL.revokeObjectURL(request.url);
    return { ok: true };
  }
  const opened = (store ??= openIdbStore());
  const readBlobs = async (jobId: string, start: number, end: number) => (await opened).readBlobs(jobId, start, end);
  return { ok: true, url: await storedBlobUrl(readBlobs, request.jobId, request.size, request.contentType) };
}

chrome.runtime.onMessage.addListener((message: unknown, _sender: unknown, sendResponse: (reply: unknown) => void) => {
  if (!isOffscreenRequest(message)) return false;
  handle(message).then(sendResponse, (error: unknown) =>
    sendResponse({ ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
  return true;
});
