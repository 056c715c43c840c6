import { askOffscreen } from '../offscreen-document';
import { storedBlobUrl, type ReadBlobs } from '../../storage/stored-blob-url';

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

/**
 * Chrome's service worker has no URL.createObjectURL: the offscreen document makes the URL (and
 * holds the frames of streamed saves).
 */
export function offscreenBlobUrls(): BlobUrlMaker {
  const release = async (url: string, type: 'revoke-blob-url' | 'close-frame') => {
    await askOffscreen({ target: 'offscreen', type, url }).catch(() => {});
  };
  return {
    async make(jobId, size, contentType) {
      const reply = await askOffscreen({ target: 'offscreen', type: 'make-blob-url', jobId, size, contentType });
      if (!reply.ok || !reply.url) throw new Error(reply.ok ? 'no blob URL' : reply.error);
      return reply.url;
    },
    revoke: (url) => release(url, 'revoke-blob-url'),
    async openFrame(url) {
      const reply = await askOffscreen({ target: 'offscreen', type: 'open-frame', url });
      if (!reply.ok) throw new Error(reply.error);
    },
    closeFrame: (url) => release(url, 'close-frame'),
  };
}

/** Chrome's worker needs the offscreen document; Firefox's background page makes URLs itself. */
export function platformBlobUrls(readBlobs: ReadBlobs): BlobUrlMaker {
  const hasOffscreen = typeof chrome !== 'undefined' && typeof chrome.offscreen?.createDocument === 'function';
  return hasOffscreen && typeof URL.createObjectURL !== 'function' ? offscreenBlobUrls() : directBlobUrls(readBlobs);
}
