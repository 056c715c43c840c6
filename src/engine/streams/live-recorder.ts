import { realClock } from '../clock';
import { sleep } from '../retry';
import { hexToBytes } from '../integrity/digests';
import { AesCbc, pkcs7Padding } from './aes-cbc';
import { parseHlsPlaylist, type HlsResource, type HlsSegment } from './hls-playlist';
import { containerOf, fetchKey, PlanRequests, readHlsStream, type PlanOptions } from './stream-plan';
import { AES_BLOCK } from './stream-layout';

/** A recording starts this many segments before the live edge: about where a player starts (RFC 8216 §6.3.3). */
const LIVE_START_SEGMENTS = 3;
/** A segment is read whole into memory to be written in order: larger ones are refused. */
const MAX_SEGMENT_BYTES = 256 * 1024 * 1024;

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
 * target duration (half of it when nothing was new). Segments are read whole, as live players do.
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
    await sleep(clock, (fresh > 0 ? 1 : 0.5) * playlist.targetSeconds * 1000, signal).catch(() => {});
    if (signal?.aborted) break;
    const reread = parseHlsPlaylist(await requests.playlist(mediaUrl), mediaUrl);
    if (reread.kind === 'media') playlist = reread;
  }
  return recording;
}

/** A resource's bytes (a byte range of it, with EXT-X-BYTERANGE), read whole. */
function whole(requests: PlanRequests, resource: HlsResource): Promise<Uint8Array<ArrayBuffer>> {
  const range = resource.byterange;
  const headers: Record<string, string> = range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {};
  return requests.read(resource.uri, headers, async (response) => {
    if (response.status !== (range ? 206 : 200) && !(range && response.status === 200)) {
      throw new Error(`${resource.uri} answered ${response.status} ${response.statusText}`.trim());
    }
    const chunks: Uint8Array[] = [];
    let length = 0;
    const reader = response.body?.getReader();
    for (;;) {
      const read = await reader?.read();
      if (!read || read.done) break;
      length += read.value.length;
      if (length > MAX_SEGMENT_BYTES) throw new Error(`${resource.uri} is larger than a segment can be`);
      chunks.push(read.value.slice());
    }
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.length;
    }
    // A server that ignores the range sends the whole file: the segment is its range of it.
    return range && response.status === 200 ? bytes.slice(range.offset, range.offset + range.length) : bytes;
  });
}

/** A whole AES-128 segment's plaintext: every block decrypted, its PKCS#7 padding checked and removed. */
async function decrypt(
  cipher: Uint8Array<ArrayBuffer>,
  key: { uri: string; iv: string },
  keys: Map<string, Promise<AesCbc>>,
  requests: PlanRequests,
): Promise<Uint8Array<ArrayBuffer>> {
  let aes = keys.get(key.uri);
  if (!aes) keys.set(key.uri, (aes = fetchKey(key.uri, requests).then((hex) => AesCbc.fromHex(hex))));
  if (cipher.length === 0 || cipher.length % AES_BLOCK !== 0) throw new Error('a segment is not whole AES blocks: it cannot be decrypted');
  const plain = await (await aes).decryptBlocks(cipher, hexToBytes(key.iv)!);
  const pad = pkcs7Padding(plain);
  if (pad === undefined) throw new Error('a segment does not decrypt with its key');
  return plain.subarray(0, plain.length - pad);
}
