import type { HttpFetch, HttpResponse } from '../http/fetch-port';
import { fetchBoundedText } from '../http/bounded-text';
import { parseContentRange, sanitizeFilename } from '../http/headers';
import { realClock, type Clock } from '../clock';
import { sleep } from '../retry';
import { bytesToHex, hexToBytes } from '../integrity/digests';
import { AesCbc } from './aes-cbc';
import {
  bestVariant,
  parseHlsPlaylist,
  refuseSite,
  StreamRefusal,
  type HlsResource,
  type HlsSegment,
  type HlsVariant,
} from './hls-playlist';
import { AES_BLOCK, streamStem, type StreamLayout, type StreamPart } from './stream-layout';

/** Playlists are small text; a hostile one must not grow memory or hold the plan. */
const PLAYLIST_LIMITS = { maxBytes: 16 * 1024 * 1024, timeoutMs: 30_000 };
/**
 * Segments whose size is asked at once of each host (one small request each, before the
 * download): each segment of the host `index % hosts`, so redundant hosts share the round trips.
 */
export const PROBE_CONCURRENCY_PER_HOST = 6;
/** A probe (or a key) that does not answer within this is an error, not a wait for ever. */
const PROBE_TIMEOUT_MS = 30_000;
/**
 * A probe or a key is asked again after a failure that may pass (a network error, a 404 of a
 * segment a CDN is still filling, a 5xx), this many times in all, waiting 0.5, 1, 2, 4 s between.
 */
const PROBE_ATTEMPTS = 5;
const PROBE_RETRY_MS = 500;

export interface StreamPlan {
  layout: StreamLayout;
  /** The variants offered, the chosen one first; empty for a media playlist. */
  variants: HlsVariant[];
  /** What the plan left out, in words for the user (a redundant host whose playlist differs…). */
  notes: string[];
}

export interface PlanOptions {
  /** Every request of the plan (the job's trusted fetch). */
  fetch: HttpFetch;
  /** Picks the variant of a master playlist; the highest bandwidth by default. */
  choose?: (variants: readonly HlsVariant[]) => HlsVariant | undefined;
  signal?: AbortSignal;
  /** The waits between a probe's attempts. */
  clock?: Clock;
  /** The page that plays the stream, when known: a refused site's page refuses its streams. */
  pageUrl?: string;
  /** A live stream is read (to record it) instead of refused. */
  live?: boolean;
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
    const chosen = (options.choose ?? bestVariant)(top.variants);
    if (!chosen) throw new StreamRefusal('empty', `${url} lists no variant of the stream`);
    if (chosen.separateAudio) {
      throw new StreamRefusal(
        'separate-audio',
        "this stream's sound is in a playlist of its own: Stitch cannot join sound and picture of an HLS stream yet",
      );
    }
    variants = [chosen, ...top.variants.filter((variant) => variant !== chosen)];
    mediaUris = chosen.uris;
  }

  const media: HlsStreamPlaylists['media'] = [];
  for (const mediaUrl of mediaUris) {
    try {
      refuseSite(mediaUrl);
      const playlist = top.kind === 'media' ? top : parseHlsPlaylist(await requests.playlist(mediaUrl), mediaUrl);
      if (playlist.kind !== 'media') throw new StreamRefusal('not-a-playlist', `${mediaUrl} is a master playlist inside a master playlist`);
      if (playlist.live && !options.live) {
        throw new StreamRefusal('live', 'this is a live stream (its playlist has no end): it can be recorded, not downloaded');
      }
      const primary = media[0];
      if (primary && !sameSegments(primary.segments, playlist.segments)) {
        notes.push(`${mediaUrl} lists other segments than ${primary.url}: not used as a mirror`);
        continue;
      }
      media.push({ url: mediaUrl, ...playlist });
    } catch (error) {
      if (error instanceof StreamRefusal || signal?.aborted) throw error;
      notes.push(`${mediaUrl} could not be read (${(error as Error).message}): not used`);
    }
  }
  const primary = media[0];
  if (!primary) throw new Error(notes.join('; ') || `${url} gave no media playlist`);
  if (primary.segments.length === 0) throw new StreamRefusal('empty', `${primary.url} lists no segment`);
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
  const keyUris = [...new Set(resources.flatMap((r) => (r.key ? [r.key.uri] : [])))];
  const keys = await Promise.all(keyUris.map((uri) => fetchKey(uri, requests)));
  const parts = await mapLimited(resources, PROBE_CONCURRENCY_PER_HOST * media.length, async (resource, index) => {
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
    if (!response.ok) throw new Error(`the stream's key ${uri} answered ${response.status}`);
    return readAtMost(response, 64);
  });
  if (bytes.length !== AES_BLOCK) throw new Error(`the stream's key ${uri} has ${bytes.length} bytes, not 16`);
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
  const what = `segment ${index + 1} of ${count} (${uri})`;
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
    // Ranges ignored: the whole resource comes; its length is counted and the end of the part's bytes kept.
    if (response.status === 200) return countBody(response, known === undefined ? undefined : offset + known);
    throw new Error(`${what} answered ${response.status} ${response.statusText}`.trim());
  });
  if (resourceSize === undefined) throw new Error(`${what} did not say its size`);
  const sourceLength = known ?? resourceSize - offset;
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

/**
 * A whole body's length and the 32 bytes before its byte `end` (its last 32 when undefined: the part
 * is the resource's end), read without keeping it.
 */
async function countBody(response: HttpResponse, end?: number): Promise<{ resourceSize: number; tail: Uint8Array }> {
  let size = 0;
  let tail = new Uint8Array(0);
  const reader = response.body?.getReader();
  for (;;) {
    const chunk = await reader?.read();
    if (!chunk || chunk.done) break;
    const kept = end === undefined ? chunk.value : chunk.value.subarray(0, Math.max(0, end - size));
    size += chunk.value.length;
    if (kept.length === 0) continue;
    const joined = new Uint8Array(tail.length + kept.length);
    joined.set(tail);
    joined.set(kept, tail.length);
    tail = joined.slice(-2 * AES_BLOCK);
  }
  return { resourceSize: size, tail };
}

export async function readAtMost(response: HttpResponse, max: number): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(max + 1);
  let length = 0;
  const reader = response.body?.getReader();
  try {
    while (reader && length <= max) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes.set(value.subarray(0, max + 1 - length), length);
      length += Math.min(value.length, max + 1 - length);
    }
  } finally {
    await reader?.cancel().catch(() => {});
  }
  return bytes.slice(0, Math.min(length, max + 1));
}

/** A failure worth another attempt: the request failed, or answered a status that may pass. */
class MayPass extends Error {}

const MAY_PASS = (status: number) => status === 404 || status === 408 || status === 425 || status === 429 || status >= 500;

/**
 * The plan's requests. Each has a signal of its own, aborted once its answer was read: a fetch
 * port may count a request as open until its signal aborts (the extension's shares six
 * connections per host that way, host-connections.ts), so a probe must free its connection when
 * done, not at its timeout. Probes and keys are asked again after a failure that may pass (a
 * network error, a CDN's 404 for a segment it is still filling, a 5xx), waiting 0.5, 1, 2, 4 s.
 */
export class PlanRequests {
  private readonly clock: Clock;

  constructor(private readonly options: PlanOptions) {
    this.clock = options.clock ?? realClock;
  }

  /** A playlist's text: one attempt (a playlist that is not there is the user's to know at once). */
  playlist(url: string): Promise<string> {
    return this.scoped(
      async (signal) => (await fetchBoundedText(url, `the playlist ${url}`, this.options.fetch, PLAYLIST_LIMITS, signal)).text,
    );
  }

  /** What `read` makes of the answer to a GET of `url`; `read` runs while the request's connection is held. */
  async read<T>(url: string, headers: Record<string, string>, read: (response: HttpResponse) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= PROBE_ATTEMPTS;
      try {
        return await this.scoped(async (signal) => {
          let response: HttpResponse;
          try {
            response = await this.options.fetch(url, { headers, signal, cache: 'no-store' });
          } catch (error) {
            throw new MayPass('no answer', { cause: error });
          }
          if (!last && MAY_PASS(response.status)) {
            await response.body?.cancel().catch(() => {});
            throw new MayPass(`answered ${response.status}`);
          }
          return read(response);
        });
      } catch (error) {
        if (!(error instanceof MayPass)) throw error;
        if (last || this.options.signal?.aborted) throw error.cause instanceof Error ? error.cause : error;
      }
      await sleep(this.clock, PROBE_RETRY_MS * 2 ** (attempt - 1), this.options.signal);
    }
  }

  private async scoped<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const done = new AbortController();
    const signals = [done.signal, AbortSignal.timeout(PROBE_TIMEOUT_MS), ...(this.options.signal ? [this.options.signal] : [])];
    try {
      return await work(AbortSignal.any(signals));
    } finally {
      done.abort(new Error('the request is done'));
    }
  }
}

/** `work` over every item, at most `limit` at once, results in order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
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
