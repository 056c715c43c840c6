import { openJobReader } from '../storage/job-reader';
import { storedBlobUrl } from '../storage/stored-blob-url';
import * as v from 'valibot';
import { OFFSCREEN_DOCUMENT_URL, OPFS_PORT_MESSAGE, type OffscreenReply } from './protocol';
import { FOR_OFFSCREEN, OFFSCREEN_REQUEST } from './protocol-schemas';

/**
 * Chrome's offscreen document (reasons WORKERS and BLOBS). It runs the storage worker, which
 * writes downloads into the origin private file system, and hands the service worker a port to
 * it. It builds a blob URL of a finished job's stored bytes for downloads.download: a slice of
 * the job's file (or Blobs of IndexedDB records) on disk, never copied into memory. It also holds
 * the frames of streamed saves (the service worker answers their navigation with the job's bytes).
 */
let storage: Worker | undefined;
/** Frames of streamed saves: a navigation to the worker's save URL becomes a browser download. */
const frames = new Map<string, HTMLIFrameElement>();

async function handle(request: v.InferOutput<typeof OFFSCREEN_REQUEST>): Promise<OffscreenReply> {
  if (request.type === 'connect-storage') {
    storage ??= new Worker('../opfs-worker.js', { type: 'module' });
    const channel = new MessageChannel();
    storage.postMessage({ connect: channel.port1 }, [channel.port1]);
    const background = (await navigator.serviceWorker.ready).active;
    if (!background) throw new Error('no service worker to connect');
    background.postMessage({ type: OPFS_PORT_MESSAGE }, [channel.port2]);
    return { ok: true };
  }
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
  const reader = await openJobReader(request.jobId);
  try {
    const readBlobs = (jobId: string, start: number, end: number) => reader.readBlobs(jobId, start, end);
    return { ok: true, url: await storedBlobUrl(readBlobs, request.jobId, request.size, request.contentType) };
  } finally {
    reader.close();
  }
}

/** Whether this is the document Chrome opened as the offscreen document, not the same page in a tab. */
const isOffscreenDocument = location.search === new URL(OFFSCREEN_DOCUMENT_URL, location.href).search;

/** Messages for the offscreen document are parsed with their schema: a malformed one is answered ok:false; others are not ours. */
if (isOffscreenDocument)
  chrome.runtime.onMessage.addListener((message: unknown, _sender: unknown, sendResponse: (reply: unknown) => void) => {
    if (!v.is(FOR_OFFSCREEN, message)) return false;
    const parsed = v.safeParse(OFFSCREEN_REQUEST, message);
    if (!parsed.success) {
      sendResponse({ ok: false, error: parsed.issues[0].message } satisfies OffscreenReply);
      return false;
    }
    handle(parsed.output).then(sendResponse, (error: unknown) =>
      sendResponse({ ok: false, error: error instanceof Error ? error.message : String(error) }),
    );
    return true;
  });
