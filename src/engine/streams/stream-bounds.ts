import { formatBytes } from '../format-bytes';
import { sourceRefusal } from '../http/request-trust';
import { StreamRefusal } from './stream-refusal';

/**
 * What an HLS stream may ask of Stitch. Every count, size and rate below comes from a playlist or
 * a server's answer; each is bounded so a hostile one costs a predictable, small amount of work,
 * and going past a bound is an error in plain words, not a long wait.
 */

/** Segments (URI lines) of one playlist: 16 hours at ffmpeg's 2 s segments, 83 hours at 10 s. */
export const MAX_SEGMENTS = 30_000;
/** Lines of one playlist: a segment takes two to four (EXTINF, its URI, a BYTERANGE, a date…). */
export const MAX_PLAYLIST_LINES = 8 * MAX_SEGMENTS;
/** EXT-X-STREAM-INF entries of a master playlist: ladders have about ten variants, on two or three hosts. */
export const MAX_VARIANT_ENTRIES = 256;
/** Redundant hosts of the chosen variant used as mirrors: RFC 8216's example has two; more only multiply requests. */
export const MAX_HOSTS = 4;
/** Distinct AES-128 keys of one stream: a key every segment of an hour at 2 s is 1,800. */
export const MAX_KEYS = 2_000;
/** Keys fetched at once: as many as one browser opens to a host over HTTP/1.1. */
export const KEY_CONCURRENCY = 6;
/**
 * The most bytes a segment may have per second of its duration: 1 Gbit/s, eight times Ultra HD
 * Blu-ray's peak. A size past it (a byte range or Content-Range of 10¹⁵ bytes for 2 s) is a lie.
 */
export const MAX_BYTES_PER_SECOND = 125_000_000;
/** The bound of any part however short (an initialization section has no duration; a short segment, little). */
export const MIN_PART_BOUND = 32 * 1024 * 1024;
/**
 * A live segment is read whole (its plaintext too when encrypted) before it is written: 64 MiB,
 * a 10 s segment of 4K at 50 Mbit/s, keeps the recorder under 256 MiB.
 */
export const MAX_LIVE_SEGMENT_BYTES = 64 * 1024 * 1024;
/** A live playlist is read again at most once a second, whatever its target duration says (0 at worst). */
export const MIN_RELOAD_MS = 1_000;
/** URIs in messages are cut to this many characters: a hostile one may be megabytes long. */
const MAX_SHOWN_URI = 160;

/**
 * A stream that breaks one of these bounds ('too-large'), or names a URI the trust rules refuse
 * ('unsafe-source'): the plan fails (no other host is tried instead), before the request it would have cost.
 */
export class StreamBoundsError extends StreamRefusal {
  constructor(message: string, reason: 'too-large' | 'unsafe-source' = 'too-large') {
    super(reason, message);
  }
}

/** `uri` short enough for a message. */
export function shown(uri: string): string {
  return uri.length <= MAX_SHOWN_URI ? uri : `${uri.slice(0, MAX_SHOWN_URI - 1)}…`;
}

/** Refuses a playlist with more lines or URIs than Stitch reads, before it is parsed (parsing costs memory per line). */
export function checkPlaylistSize(text: string, url: string): void {
  let lines = 0;
  let uris = 0;
  for (let at = 0; at < text.length;) {
    const end = text.indexOf('\n', at);
    const next = end === -1 ? text.length : end + 1;
    const first = firstVisible(text, at, next);
    if (first !== undefined) {
      lines++;
      if (first !== '#') uris++;
    }
    if (uris > MAX_SEGMENTS || lines > MAX_PLAYLIST_LINES) {
      const what = uris > MAX_SEGMENTS ? `more than ${MAX_SEGMENTS} segments` : `more than ${MAX_PLAYLIST_LINES} lines`;
      throw new Error(`the playlist ${shown(url)} has ${what}, the most Stitch reads in one playlist`);
    }
    at = next;
  }
}

/** The first character of text[from, to) that is not white space, if any. */
function firstVisible(text: string, from: number, to: number): string | undefined {
  for (let i = from; i < to; i++) {
    const c = text[i]!;
    if (c.trim() !== '') return c;
  }
  return undefined;
}

/** Why `uri`, which a playlist of the stream the user chose at `playlistUrl` names, is not requested (request-trust.ts's rules), if it is not. */
export function uriRefusal(uri: string, playlistUrl: string): string | undefined {
  const refusal = sourceRefusal(uri, playlistUrl, { covered: false });
  return refusal?.split(uri).join(shown(uri));
}

/** The most bytes a part of `seconds` (none: an initialization section) may have. */
export function partBound(seconds: number | undefined): number {
  return Math.max(MIN_PART_BOUND, Math.ceil((seconds ?? 0) * MAX_BYTES_PER_SECOND));
}

/** Why a part said to have `bytes` (`more`: more than that) cannot be one of `seconds`, if it cannot. */
export function partSizeRefusal(what: string, bytes: number, seconds: number | undefined, more = false): string | undefined {
  const bound = partBound(seconds);
  if (bytes <= bound && !more) return undefined;
  const per = seconds === undefined ? 'an initialization section' : `a ${seconds} s segment`;
  const has = `${more ? 'more than ' : ''}${bytes} bytes`;
  return `${what} has ${has}, more than ${per} can have (${formatBytes(bound)}, at 1 Gbit/s): the playlist or the server is wrong`;
}
