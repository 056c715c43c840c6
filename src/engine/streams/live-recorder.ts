import { realClock } from '../clock';
import type { HttpResponse } from '../http/fetch-port';
import { parseContentLength } from '../http/headers';
import { sleep } from '../retry';
import { hexToBytes } from '../integrity/digests';
import { AesCbc, pkcs7Padding } from './aes-cbc';
import { MAX_LIVE_SEGMENT_BYTES, MIN_RELOAD_MS, shown, StreamBoundsError } from './stream-bounds';
import { parseHlsPlaylist, type HlsResource, type HlsSegment } from './hls-playlist';
import { checkMediaPlaylist } from './hls-trust';
import { PlanRequests, type PlanOptions } from './plan-requests';
import { containerOf, fetchKey, readHlsStream } from './stream-plan';
import { AES_BLOCK } from './stream-layout';

/** A recording starts this many segments before the live edge: about where a player starts (RFC 8216 §6.3.3). */
const LIVE_START_SEGMENTS = 3;
/** Keys kept for the segments to come: a stream rotating its key keeps a few in its window. */
const KEYS_KEPT = 16;
/** Ciphertext is decrypted this many bytes at a time into the plaintext's buffer: no third copy of a segment. */
const DECRYPT_BYTES = 256 * 1024;

export interface LiveRecording {
  /** The file's extension and type, from its segments (stream-plan.ts's containerOf). */
  container: { extension: string; contentType: string };
  segments: number;
  bytes: number;
  seconds: number;
  /** Segments that left the playlist's window before they were fetched (the line was too slow). */
  missed: number;
  /** The playlist ended (EXT-X-ENDLIST), rather than the recording being stopped. */
  ended: boolean;
}

export interface RecordOptions extends PlanOptions {
  /** Takes each segment's bytes, in order; the recording waits for it. */
  write(bytes: Uint8Array): Promise<void>;
  /** After each segment written. */
  onProgress?(recording: LiveRecording): void;
}

/**
 * Records a live HLS stream until `signal` aborts (the user stops it) or its playlist ends: from
 * three segments before the live edge, each new segment in order (a segment cut by the stop is
 * left out), its initialization section first, AES-128 decrypted; the playlist asked again every
 * target duration (half of it when nothing was new), at most once every MIN_RELOAD_MS. Segments are
 * read whole, as live players do, up to MAX_LIVE_SEGMENT_BYTES. Each playlist read is checked as
 * the plan's are (hls-trust.ts): a URI that may not be requested ends the recording.
 */
export async function recordLiveStream(url: string, options: RecordOptions): Promise<LiveRecording> {
  const { signal } = options;
  const clock = options.clock ?? realClock;
  const requests = new PlanRequests(options);
  const { media } = await readHlsStream(url, { ...options, live: true });
  const mediaUrl = media[0]!.url;
  let playlist: { segments: HlsSegment[]; live: boolean; targetSeconds: number } = media[0]!;
  const recording: LiveRecording = {
    container: containerOf(playlist.segments),
    segments: 0,
    bytes: 0,
    seconds: 0,
    missed: 0,
    ended: false,
  };
  const keys = new Map<string, Promise<AesCbc>>();
  let nextSequence = playlist.segments[Math.max(0, playlist.segments.length - LIVE_START_SEGMENTS)]?.sequence ?? 0;
  let lastMap: string | undefined;

  while (!signal?.aborted) {
    let fresh = 0;
    for (const segment of playlist.segments) {
      if (segment.sequence < nextSequence) continue;
      if (segment.sequence > nextSequence) recording.missed += segment.sequence - nextSequence;
      const mapKey = segment.map && JSON.stringify(segment.map);
      const init = segment.map && mapKey !== lastMap ? await whole(requests, segment.map) : undefined;
      let bytes = await whole(requests, segment);
      if (segment.key) bytes = await decrypt(bytes, segment.key, keys, requests);
      if (signal?.aborted) break;
      if (init) await options.write(init);
      await options.write(bytes);
      lastMap = mapKey ?? lastMap;
      nextSequence = segment.sequence + 1;
      fresh++;
      recording.segments++;
      recording.bytes += bytes.length + (init?.length ?? 0);
      recording.seconds += segment.duration;
      options.onProgress?.({ ...recording });
    }
    if (!playlist.live) return { ...recording, ended: true };
    if (signal?.aborted) break;
    // A stop during the wait ends the recording below, with what it has.
    const waitMs = Math.max(MIN_RELOAD_MS, (fresh > 0 ? 1 : 0.5) * playlist.targetSeconds * 1000);
    await sleep(clock, waitMs, signal).catch(() => {});
    if (signal?.aborted) break;
    const reread = parseHlsPlaylist(await requests.playlist(mediaUrl), mediaUrl);
    if (reread.kind === 'media') {
      checkMediaPlaylist(reread.segments, mediaUrl, url);
      playlist = reread;
    }
  }
  return recording;
}

/** A resource's bytes (a byte range of it, with EXT-X-BYTERANGE), read whole: at most MAX_LIVE_SEGMENT_BYTES. */
function whole(requests: PlanRequests, resource: HlsResource): Promise<Uint8Array<ArrayBuffer>> {
  const range = resource.byterange;
  if (range && range.length > MAX_LIVE_SEGMENT_BYTES) throw new StreamBoundsError(tooLarge(resource.uri));
  const headers: Record<string, string> = range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {};
  return requests.read(resource.uri, headers, async (response) => {
    if (response.status !== (range ? 206 : 200) && !(range && response.status === 200)) {
      throw new Error(`${shown(resource.uri)} answered ${response.status} ${response.statusText}`.trim());
    }
    // A server that ignores the range sends the whole file: the segment is its range of it.
    const skip = range && response.status === 200 ? range.offset : 0;
    const announced = parseContentLength(response.headers.get('content-length'));
    const length = range?.length ?? announced;
    if (length !== undefined && length > MAX_LIVE_SEGMENT_BYTES) throw new StreamBoundsError(tooLarge(resource.uri));
    return readBody(response, skip, length, resource.uri);
  });
}

/**
 * Body bytes [skip, skip + length) (to its end when `length` is undefined, refusing more than
 * MAX_LIVE_SEGMENT_BYTES), read into one buffer when the length is known.
 */
async function readBody(response: HttpResponse, skip: number, length: number | undefined, uri: string): Promise<Uint8Array<ArrayBuffer>> {
  const into = length === undefined ? undefined : new Uint8Array(length);
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let seen = 0;
  const reader = response.body?.getReader();
  try {
    while (length === undefined || kept < length) {
      const read = await reader?.read();
      if (!read || read.done) break;
      const from = Math.max(0, skip - seen);
      seen += read.value.length;
      const chunk = read.value.subarray(from, length === undefined ? undefined : from + length - kept);
      if (kept + chunk.length > MAX_LIVE_SEGMENT_BYTES) throw new StreamBoundsError(tooLarge(uri));
      if (into) into.set(chunk, kept);
      else if (chunk.length > 0) chunks.push(chunk.slice());
      kept += chunk.length;
    }
  } finally {
    await reader?.cancel().catch(() => {});
  }
  if (into) return kept === into.length ? into : into.slice(0, kept);
  const bytes = new Uint8Array(kept);
  let at = 0;
  for (const chunk of chunks.splice(0)) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

function tooLarge(uri: string): string {
  return `${shown(uri)} is larger than ${MAX_LIVE_SEGMENT_BYTES / 1024 / 1024} MiB, the most a live segment may be`;
}

/** A whole AES-128 segment's plaintext: every block decrypted, its PKCS#7 padding checked and removed. */
async function decrypt(
  cipher: Uint8Array<ArrayBuffer>,
  key: { uri: string; iv: string },
  keys: Map<string, Promise<AesCbc>>,
  requests: PlanRequests,
): Promise<Uint8Array<ArrayBuffer>> {
  let aes = keys.get(key.uri);
  if (!aes) {
    if (keys.size >= KEYS_KEPT) keys.delete(keys.keys().next().value!);
    keys.set(key.uri, (aes = fetchKey(key.uri, requests).then((hex) => AesCbc.fromHex(hex))));
  }
  if (cipher.length === 0 || cipher.length % AES_BLOCK !== 0) throw new Error('a segment is not whole AES blocks: it cannot be decrypted');
  const plain = new Uint8Array(cipher.length);
  let iv = hexToBytes(key.iv)!;
  for (let at = 0; at < cipher.length; at += DECRYPT_BYTES) {
    const piece = cipher.subarray(at, at + DECRYPT_BYTES);
    plain.set(await (await aes).decryptBlocks(piece, iv), at);
    iv = piece.slice(-AES_BLOCK);
  }
  const pad = pkcs7Padding(plain);
  if (pad === undefined) throw new Error('a segment does not decrypt with its key');
  return plain.subarray(0, plain.length - pad);
}
