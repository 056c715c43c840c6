import type { OffscreenReply, OffscreenRequest } from '../offscreen/protocol';
import { storedBlobUrl, type ReadBlobs } from '../storage/stored-blob-url';

/** Makes a blob URL of a finished job's stored bytes for downloads.download, without copying them. */
export interface BlobUrlMaker {
  make(jobId: string, size: number, contentType?: string): Promise<string>;
  revoke(url: string): Promise<void>;
  /**
   * Chrome only: navigates a frame to `url`, the worker's save route, whose answer becomes a
   * browser download while the job still downloads; closeFrame when it ended. Absent elsewhere
   * (Firefox's background page gets no fetch events): saves are blob URLs of the finished file.
   */
  openFrame?(url: string): Promise<void>;
  closeFrame?(url: string): Promise<void>;
}

/** Firefox's background page (and any context with URL.createObjectURL). */
export function directBlobUrls(readBlobs: ReadBlobs): BlobUrlMaker {
  return {
    make: (jobId, size, contentType) => storedBlobUrl(readBlobs, jobId, size, contentType),
    async revoke(url) {
      URL.revokeObjectURL(url);
    },
  };
}

const OFFSCREEN_PATH = 'offscreen/offscreen.html';

/**
 * Chrome's service worker has no URL.createObjectURL: an offscreen document (reason BLOBS)
 * makes the URL (and holds the frames of streamed saves), and is closed again once no blob URL
 * or frame is outstanding.
 */
export function offscreenBlobUrls(): BlobUrlMaker {
  const outstanding = new Set<string>();
  let creating: Promise<void> | undefined;

  async function ensureDocument(): Promise<void> {
    const existing = await chrome.runtime.getContexts?.({ contextTypes: ['OFFSCREEN_DOCUMENT'] });
    if (existing && existing.length > 0) return;
    creating ??= chrome.offscreen
      .createDocument({ url: OFFSCREEN_PATH, reasons: ['BLOBS'], justification: 'Make a blob URL of a downloaded file to save it' })
      .catch((error: unknown) => {
        // Another save created it between our check and our call.
        if (!String(error).includes('Only a single offscreen')) throw error;
      })
      .finally(() => (creating = undefined));
    await creating;
  }

  async function send(request: OffscreenRequest): Promise<OffscreenReply> {
    const reply = (await chrome.runtime.sendMessage(request)) as OffscreenReply | undefined;
    if (!reply) throw new Error('the offscreen document did not answer');
    return reply;
  }

  /** Lets go of a blob URL or a frame; the document closes with the last one. */
  async function release(url: string, type: 'revoke-blob-url' | 'close-frame'): Promise<void> {
    if (!outstanding.delete(url)) return;
    await send({ target: 'offscreen', type, url }).catch(() => {});
    if (outstanding.size === 0) await chrome.offscreen.closeDocument().catch(() => {});
  }

  return {
    async make(jobId, size, contentType) {
      await ensureDocument();
      const reply = await send({ target: 'offscreen', type: 'make-blob-url', jobId, size, contentType });
      if (!reply.ok || !reply.url) throw new Error(reply.ok ? 'no blob URL' : reply.error);
      outstanding.add(reply.url);
      return reply.url;
    },
    revoke: (url) => release(url, 'revoke-blob-url'),
    async openFrame(url) {
      await ensureDocument();
      const reply = await send({ target: 'offscreen', type: 'open-frame', url });
      if (!reply.ok) throw new Error(reply.error);
      outstanding.add(url);
    },
    closeFrame: (url) => release(url, 'close-frame'),
  };
}

/** Chrome's worker needs the offscreen document; Firefox's background page makes URLs itself. */
export function platformBlobUrls(readBlobs: ReadBlobs): BlobUrlMaker {
  const hasOffscreen = typeof chrome !== 'undefined' && typeof chrome.offscreen?.createDocument === 'function';
  return hasOffscreen && typeof URL.createObjectURL !== 'function' ? offscreenBlobUrls() : directBlobUrls(readBlobs);
}
