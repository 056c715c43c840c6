/**
 * Private messages between the background and Chrome's offscreen document, which runs the storage
 * worker (the service worker cannot start one), makes blob URLs (the service worker has no
 * URL.createObjectURL) and navigates the frames of streamed saves. Every message carries
 * `target: 'offscreen'` so the background's page-facing handler ignores them. Each is declared
 * once, as a schema in protocol-schemas.ts (imported by the offscreen document alone, which
 * parses with it); the types here are derived from them.
 */
import type * as v from 'valibot';
import type { OFFSCREEN_REQUEST } from './protocol-schemas';

export type OffscreenRequest = v.InferInput<typeof OFFSCREEN_REQUEST>;

/**
 * The offscreen document's URL. Its query marks the one Chrome opened as the offscreen document: the
 * same page opened in a tab (tests use it to talk to the background) must not answer the background's
 * requests, or the storage port, a blob URL or a save's frame would die with that tab.
 */
export const OFFSCREEN_DOCUMENT_URL = 'offscreen/offscreen.html?document';

/** The `type` of the service-worker message that carries the storage worker's port. */
export const OPFS_PORT_MESSAGE = 'stitch-storage-port';

export type OffscreenReply = { ok: true; url?: string } | { ok: false; error: string };
