/**
 * Private messages between the background and Chrome's offscreen document (which exists only
 * to make blob URLs, Chrome's service worker having no URL.createObjectURL, and to navigate the
 * frames of streamed saves). Every message carries
 * `target: 'offscreen'` so the background's page-facing handler ignores them.
 */
export type OffscreenRequest =
  | { target: 'offscreen'; type: 'make-blob-url'; jobId: string; size: number; contentType?: string }
  | { target: 'offscreen'; type: 'revoke-blob-url'; url: string }
  | { target: 'offscreen'; type: 'open-frame'; url: string }
  | { target: 'offscreen'; type: 'close-frame'; url: string };

export type OffscreenReply = { ok: true; url?: string } | { ok: false; error: string };

export function isOffscreenRequest(message: unknown): message is OffscreenRequest {
  return (message as { target?: unknown } | null)?.target === 'offscreen';
}
