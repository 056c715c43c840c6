/**
 * Private messages between the background and Chrome's offscreen document, which runs the storage
 * worker (the service worker cannot start one), makes blob URLs (the service worker has no
 * URL.createObjectURL) and navigates the frames of streamed saves. Every message carries
 * `target: 'offscreen'` so the background's page-facing handler ignores them.
 */
export type OffscreenRequest =
  | { target: 'offscreen'; type: 'make-blob-url'; jobId: string; size: number; contentType?: string }
  | { target: 'offscreen'; type: 'revoke-blob-url'; url: string }
  | { target: 'offscreen'; type: 'open-frame'; url: string }
  | { target: 'offscreen'; type: 'close-frame'; url: string }
  /** Sends the service worker a port to the storage worker, in a message of type OPFS_PORT_MESSAGE. */
  | { target: 'offscreen'; type: 'connect-storage' };

/** The `type` of the service-worker message that carries the storage worker's port. */
export const OPFS_PORT_MESSAGE = 'stitch-storage-port';

export type OffscreenReply = { ok: true; url?: string } | { ok: false; error: string };

export function isOffscreenRequest(message: unknown): message is OffscreenRequest {
  return (message as { target?: unknown } | null)?.target === 'offscreen';
}
