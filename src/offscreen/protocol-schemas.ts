/**
 * One valibot schema per message the background sends Chrome's offscreen document (protocol.ts
 * derives their types from these). Only the offscreen document imports this module: it parses
 * what it receives with them. Only a bug in the background can send a malformed one: valibot's
 * own English words say what is wrong.
 */
import * as v from 'valibot';

/** A message meant for the offscreen document; the pages' requests to the background are not. */
export const FOR_OFFSCREEN = v.looseObject({ target: v.literal('offscreen') });

/** A request of type `type` with these fields, addressed to the offscreen document. */
const request = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) =>
  v.object({ target: v.literal('offscreen'), type: v.literal(type), ...entries });

const URL_TEXT = v.pipe(v.string(), v.nonEmpty());

export const OFFSCREEN_REQUEST = v.variant(
  'type',
  [
    /** A blob URL of a finished job's stored bytes, for downloads.download. */
    request('make-blob-url', {
      jobId: v.pipe(v.string(), v.nonEmpty()),
      size: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
      contentType: v.optional(v.string()),
    }),
    request('revoke-blob-url', { url: URL_TEXT }),
    /** A frame navigating to a streamed save's URL (the service worker answers it with the job's bytes). */
    request('open-frame', { url: URL_TEXT }),
    request('close-frame', { url: URL_TEXT }),
    /** Sends the service worker a port to the storage worker, in a message of type OPFS_PORT_MESSAGE. */
    request('connect-storage', {}),
  ],
  'unknown offscreen request',
);
