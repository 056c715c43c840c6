import type { HttpResponse } from '../http/fetch-port';
import { parseContentRange, sanitizeFilename } from '../http/headers';
import { bytesToHex, hexToBytes } from '../integrity/digests';
import { AesCbc } from './aes-cbc';
import { KEY_CONCURRENCY, MAX_HOSTS, partBound, partSizeRefusal, shown, StreamBoundsError } from './stream-bounds';
import {
  bestVariant,
  parseHlsPlaylist,
  refuseSite,
  StreamRefusal,
  type HlsResource,
  type HlsSegment,
  type HlsVariant,
} from './hls-playlist';
import { checkMediaPlaylist, usableVariants } from './hls-trust';
import { mapLimited, PlanRequests, PROBE_CONCURRENCY_PER_HOST, readAtMost, type PlanOptions } from './plan-requests';
import { AES_BLOCK, streamStem, type StreamLayout, type StreamPart } from './stream-layout';

// The plan's requests, for the other planners (dash-plan.ts, stream-offer.ts, plan-stream.ts).
export { mapLimited, PlanRequests, PROBE_CONCURRENCY_PER_HOST, readAtMost, type PlanOptions } from './plan-requests';

export interface StreamPlan {
  layout: StreamLayout;
  /** The variants offered, the chosen one first; empty for a media playlist. */
  variants: HlsVariant[];
  /** What the plan left out, in words for the user (a redundant host whose playlist differs…). */
  notes: string[];
}

/** A stream's playlists, read: the chosen variant's hosts and segments, before any segment is asked. */
export interface HlsStreamPlaylists {
  /** The variants offered, the chosen one first; empty for a media playlist. */
  variants: HlsVariant[];
  /** The chosen variant on each of its hosts that lists the same segments (the primary first). */
  media: { url: string; segments: HlsSegment[]; durationSeconds: number; live: boolean; targetSeconds: number }[];
  notes: string[];
}

/**
 * Reads an HLS stream's playlists (`text`: the first one's, when read already): the variant chosen (the highest by default), and its
 * redundant hosts' media playlists, kept as mirrors when they list the same segments. Live
 * streams, DRM and sound in a playlist of its own are refused with a StreamRefusal.
 */
export async function readHlsStream(url: string, options: PlanOptions, text?: string): Promise<HlsStreamPlaylists> {
  const { signal } = options;
  refuseSite(url, options.pageUrl);
  const requests = new PlanRequests(options);
  const notes: string[] = [];
  const top = parseHlsPlaylist(text ?? (await requests.playlist(url)), url);
  let variants: HlsVariant[] = [];
  let mediaUris = [url];
  if (top.kind === 'master') {
    const usable = usableVariants(top.variants, url, notes);
    const chosen = (options.choose ?? bestVariant)(usable);
    if (!chosen) throw new StreamRefusal('empty', `${shown(url)} lists no variant of the stream`);
    if (chosen.separateAudio) {
      throw new StreamRefusal(
        'separate-audio',
        "this stream's sound is in a playlist of its own: Stitch cannot join sound and picture of an HLS stream yet",
      );
    }
    variants = [chosen, ...usable.filter((variant) => variant !== chosen)];
    mediaUris = chosen.uris.slice(0, MAX_HOSTS);
    if (chosen.uris.length > MAX_HOSTS) notes.push(`the variant is on ${chosen.uris.length} hosts: the first ${MAX_HOSTS} are used`);
  }

  const media: HlsStreamPlaylists['media'] = [];
  for (const mediaUrl of mediaUris) {
    try {
      refuseSite(mediaUrl);
      const playlist = top.kind === 'media' ? top : parseHlsPlaylist(await requests.playlist(mediaUrl), mediaUrl);
      if (playlist.kind !== 'media') {
        throw new StreamRefusal('not-a-playlist', `${shown(mediaUrl)} is a master playlist inside a master playlist`);
      }
      if (playlist.live && !options.live) {
        throw new StreamRefusal('live', 'this is a live stream (its playlist has no end): it can be recorded, not downloaded');
      }
      checkMediaPlaylist(playlist.segments, mediaUrl, url);
      const primary = media[0];
      if (primary && !sameSegments(primary.segments, playlist.segments)) {
        notes.push(`${shown(mediaUrl)} lists other segments than ${shown(primary.url)}: not used as a mirror`);
        continue;
      }
      media.push({ url: mediaUrl, ...playlist });
    } catch (error) {
      if (error instanceof StreamRefusal || error instanceof StreamBoundsError || signal?.aborted) throw error;
      notes.push(`${shown(mediaUrl)} could not be read (${(error as Error).message}): not used`);
    }
  }
  const primary = media[0];
  if (!primary) throw new Error(notes.join('; ') || `${shown(url)} gave no media playlist`);
  if (primary.segments.length === 0) throw new StreamRefusal('empty', `${shown(primary.url)} lists no segment`);
  return { variants, media, notes };
}

/**
 * Lays an HLS stream out as one file (readHlsStream's variant and hosts; `text`, the playlist's, when read already): each segment's size asked
 * (a one-byte range, or the last two AES blocks of an encrypted one, whose padding gives its
 * plaintext's size) of one of the hosts in turn, and the AES-128 keys fetched. `name` (a page's title) names
 * the file, else the playlist's name does.
 */
export async function planHlsStream(url: string, options: PlanOptions & { name?: string }, text?: string): Promise<StreamPlan> {
  const requests = new PlanRequests(options);
  const { variants, media, notes } = await readHlsStream(url, options, text);
  const primary = media[0]!;
  const resources = resourcesOf(media.map((m) => m.segments));
  resources.forEach((resource, index) => {
    const refusal =
      resource.byterange && partSizeRefusal(partName(resource, index, resources.length), resource.byterange.length, resource.seconds);
    if (refusal) throw new StreamBoundsError(refusal);
  });
  const keyUris = [...new Set(resources.flatMap((r) => (r.key ? [r.key.uri] : [])))];
  const keys = await mapLimited(keyUris, KEY_CONCURRENCY, (uri) => fetchKey(uri, requests));
  // Redundant "hosts" on one server share its connections.
  const hosts = new Set(media.map((m) => new URL(m.url).host)).size;
  const parts = await mapLimited(resources, PROBE_CONCURRENCY_PER_HOST * hosts, async (resource, index) => {
    const part = await probePart(resource, index, resources.length, index % media.length, keys, keyUris, requests);
    return resource.seconds === undefined ? part : { ...part, seconds: resource.seconds };
  });
  const container = containerOf(primary.segments);
  const stem = options.name ?? streamStem(url);
  return {
    layout: {
      kind: 'hls',
      playlist: url,
      filename: sanitizeFilename(`${stem}.${container.extension}`),
      contentType: container.contentType,
      durationSeconds: primary.durationSeconds,
      parts,
      sources: media.map((m, source) => ({ url: m.url, uris: resources.map((r) => r.uris[source]!) })),
      keys,
    },
    variants,
    notes,
  };
}

/** One part of the file: an initialization section or a segment, with each source's URI for it. */
interface PartResource {
  uris: string[];
  /** A segment's duration; none for an initialization section. */
  seconds?: number;
  byterange?: HlsResource['byterange'];
  key?: HlsSegment['key'];
}

/** The parts, in order: each segment, preceded by its initialization section wherever that changes. */
function resourcesOf(sources: HlsSegment[][]): PartResource[] {
  const [primary] = sources;
  const parts: PartResource[] = [];
  let lastMap: string | undefined;
  primary!.forEach((segment, index) => {
    const map = segment.map;
    const mapKey = map && JSON.stringify(map);
    if (map && mapKey !== lastMap) {
      parts.push({ uris: sources.map((segments) => segments[index]!.map!.uri), byterange: map.byterange });
    }
    lastMap = mapKey;
    parts.push({
      uris: sources.map((segments) => segments[index]!.uri),
      seconds: segment.duration,
      byterange: segment.byterange,
      key: segment.key,
    });
  });
  return parts;
}

/** Redundant hosts serve the same segments: as many, as long, ranged and encrypted alike. */
function sameSegments(a: readonly HlsSegment[], b: readonly HlsSegment[]): boolean {
  return (
    a.length === b.length &&
    a.every((segment, i) => {
      const other = b[i]!;
      return (
        Math.abs(segment.duration - other.duration) < 0.001 &&
        JSON.stringify(segment.byterange) === JSON.stringify(other.byterange) &&
        segment.key?.iv === other.key?.iv &&
        !segment.map === !other.map
      );
    })
  );
}

/** An AES-128 key, in hex: exactly 16 bytes. */
export async function fetchKey(uri: string, requests: PlanRequests): Promise<string> {
  const bytes = await requests.read(uri, {}, async (response) => {
    if (!response.ok) throw new Error(`the stream's key ${shown(uri)} answered ${response.status}`);
    return readAtMost(response, 64);
  });
  if (bytes.length !== AES_BLOCK) throw new Error(`the stream's key ${shown(uri)} has ${bytes.length} bytes, not 16`);
  return bytesToHex(bytes);
}

/** What host `host` says of one part: its size, and for an encrypted one its plaintext's (redundant hosts serve the same segments). */
async function probePart(
  resource: PartResource,
  index: number,
  count: number,
  host: number,
  keys: readonly string[],
  keyUris: readonly string[],
  requests: PlanRequests,
): Promise<StreamPart> {
  const uri = resource.uris[host]!;
  const what = partName(resource, index, count, host);
  const offset = resource.byterange?.offset ?? 0;
  const key = resource.key && { index: keyUris.indexOf(resource.key.uri), iv: resource.key.iv };
  if (!key && resource.byterange)
    return { length: resource.byterange.length, sourceOffset: offset, sourceLength: resource.byterange.length };

  // Unencrypted: one byte tells the size. Encrypted: the last two blocks tell the padding too.
  const known = resource.byterange?.length;
  const range = !key ? `bytes=${offset}-${offset}` : known === undefined ? `bytes=-${2 * AES_BLOCK}` : tailRange(offset, known);
  const { resourceSize, tail } = await requests.read(uri, { Range: range }, async (response) => {
    if (response.status === 206) {
      const contentRange = parseContentRange(response.headers.get('content-range'));
      const total = contentRange?.kind === 'bytes' ? contentRange.total : undefined;
      return { resourceSize: total, tail: key ? await readAtMost(response, 2 * AES_BLOCK) : new Uint8Array(0) };
    }
    // Ranges ignored: the whole resource comes; its length is counted (up to the part's bound) and the end of the part's bytes kept.
    if (response.status === 200) {
      const end = known === undefined ? undefined : offset + known;
      const counted = await countBody(response, end, end ?? partBound(resource.seconds));
      if (counted.resourceSize === undefined && end === undefined) {
        // With `more`, partSizeRefusal always says why.
        throw new StreamBoundsError(partSizeRefusal(what, partBound(resource.seconds), resource.seconds, true)!);
      }
      return counted;
    }
    throw new Error(`${what} answered ${response.status} ${response.statusText}`.trim());
  });
  if (resourceSize === undefined && known === undefined) throw new Error(`${what} did not say its size`);
  const sourceLength = known ?? resourceSize! - offset;
  const refusal = partSizeRefusal(what, sourceLength, resource.seconds);
  if (refusal) throw new StreamBoundsError(refusal);
  if (!key) return { length: sourceLength, sourceOffset: offset, sourceLength, resourceSize };

  if (sourceLength % AES_BLOCK !== 0 || sourceLength === 0) throw new Error(`${what} is not whole AES blocks: it cannot be decrypted`);
  const lastTwo = tail.slice(-2 * AES_BLOCK);
  const last = lastTwo.slice(-AES_BLOCK);
  const before = sourceLength === AES_BLOCK ? hexToBytes(key.iv)! : lastTwo.slice(0, AES_BLOCK);
  const padding = await (await AesCbc.fromHex(keys[key.index]!)).paddingOf(last, before);
  if (padding === undefined) throw new Error(`${what} does not decrypt with its key`);
  return { length: sourceLength - padding, sourceOffset: offset, sourceLength, resourceSize, key };
}

function tailRange(offset: number, length: number): string {
  const from = offset + Math.max(0, length - 2 * AES_BLOCK);
  return `bytes=${from}-${offset + length - 1}`;
}

/** `segment 3 of 40 (URI)`: a part as messages name it, on host `host`. */
function partName(resource: PartResource, index: number, count: number, host = 0): string {
  return `segment ${index + 1} of ${count} (${shown(resource.uris[host]!)})`;
}

/**
 * A whole body's length and the 32 bytes before its byte `end` (its last 32 when undefined: the part
 * is the resource's end), read without keeping it; past `limit` bytes it is not read on and its
 * length is unknown.
 */
async function countBody(
  response: HttpResponse,
  end: number | undefined,
  limit: number,
): Promise<{ resourceSize: number | undefined; tail: Uint8Array }> {
  let size = 0;
  let tail = new Uint8Array(0);
  const reader = response.body?.getReader();
  try {
    for (;;) {
      const chunk = await reader?.read();
      if (!chunk || chunk.done) return { resourceSize: size, tail };
      const kept = end === undefined ? chunk.value : chunk.value.subarray(0, Math.max(0, end - size));
      size += chunk.value.length;
      if (kept.length > 0) {
        const joined = new Uint8Array(tail.length + kept.length);
        joined.set(tail);
        joined.set(kept, tail.length);
        tail = joined.slice(-2 * AES_BLOCK);
      }
      if (size > limit) return { resourceSize: undefined, tail };
    }
  } finally {
    await reader?.cancel().catch(() => {});
  }
}

const CONTAINERS = {
  ts: { extension: 'ts', contentType: 'video/mp2t' },
  mp4: { extension: 'mp4', contentType: 'video/mp4' },
  aac: { extension: 'aac', contentType: 'audio/aac' },
  mp3: { extension: 'mp3', contentType: 'audio/mpeg' },
};

/**
 * The file's container: fMP4 (an initialization section) joins into an MP4; MPEG-TS segments are
 * joined as they are into a .ts (exact, and plays in every desktop player; a remux to MP4 would
 * change the bytes and needs a muxer in the extension); packed audio keeps its format.
 */
export function containerOf(segments: readonly HlsSegment[]): (typeof CONTAINERS)[keyof typeof CONTAINERS] {
  if (segments.some((segment) => segment.map)) return CONTAINERS.mp4;
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(segments[0]!.uri).pathname)?.[1]?.toLowerCase();
  if (extension === 'aac' || extension === 'mp3') return CONTAINERS[extension];
  if (extension === 'mp4' || extension === 'm4s') return CONTAINERS.mp4;
  return CONTAINERS.ts;
}
