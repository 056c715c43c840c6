import { Parser, type Manifest } from 'm3u8-parser';
import { sequenceIv } from './aes-cbc';
import { checkPlaylistSize, MAX_VARIANT_ENTRIES, shown, StreamBoundsError } from './stream-bounds';
import { StreamRefusal, type RefusalReason } from './stream-refusal';

/** One quality of a stream; several URIs when hosts serve it redundantly (the same segments). */
export interface HlsVariant {
  uris: string[];
  bandwidth?: number;
  resolution?: { width: number; height: number };
  codecs?: string;
  /** The variant's sound comes from another playlist (an EXT-X-MEDIA audio group with a URI). */
  separateAudio: boolean;
  /** The URIs its EXT-X-MEDIA groups name: never fetched, but a variant naming a refused one is not used. */
  renditions?: string[];
}

/** A resource to fetch whole, or the bytes [offset, offset + length) of it. */
export interface HlsResource {
  uri: string;
  byterange?: { offset: number; length: number };
}

export interface HlsSegment extends HlsResource {
  duration: number;
  /** Its media sequence number: a live playlist's window slides over these. */
  sequence: number;
  /** AES-128: the key's URI and the IV (the playlist's, else the media sequence number), in hex. */
  key?: { uri: string; iv: string };
  /** The fMP4 initialization section this segment needs (EXT-X-MAP). */
  map?: HlsResource;
}

export type HlsPlaylist =
  | { kind: 'master'; variants: HlsVariant[] }
  | {
      kind: 'media';
      segments: HlsSegment[];
      live: boolean;
      durationSeconds: number;
      /** EXT-X-TARGETDURATION: a live playlist is asked again about this often. */
      targetSeconds: number;
    };

export { StreamRefusal, type RefusalReason };

/**
 * Sites whose terms forbid downloading their videos, and whose videos the Chrome Web Store refuses
 * extensions to download (YouTube, with its player's and its CDN's hosts).
 */
const REFUSED_SITES = ['youtube.com', 'youtube-nocookie.com', 'youtu.be', 'googlevideo.com'];

/** Refuses a stream of a site in REFUSED_SITES, by its playlist's host or its page's. */
export function refuseSite(...urls: (string | undefined)[]): void {
  for (const url of urls) {
    let host: string;
    try {
      host = new URL(url ?? '').hostname.toLowerCase();
    } catch {
      continue;
    }
    const site = REFUSED_SITES.find((refused) => host === refused || host.endsWith(`.${refused}`));
    if (site) throw new StreamRefusal('site', `${site} forbids downloading its videos: Stitch does not download them`);
  }
}

const PLAYLIST_TYPES = new Set(['application/vnd.apple.mpegurl', 'application/x-mpegurl', 'audio/mpegurl', 'audio/x-mpegurl']);

/** Whether a response is an HLS playlist: by its Content-Type, else by its path's `.m3u8`. */
export function looksLikeHlsPlaylist(url: string, contentType: string | undefined): boolean {
  return typeOrPath(url, contentType, PLAYLIST_TYPES, /\.m3u8$/i);
}

/** A response whose Content-Type is one of `types`, else whose URL's path matches `path`. */
export function typeOrPath(url: string, contentType: string | undefined, types: ReadonlySet<string>, path: RegExp): boolean {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  if (type && types.has(type)) return true;
  try {
    return path.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/** Parses an HLS playlist (RFC 8216) fetched from `baseUrl`; URIs come out absolute. */
export function parseHlsPlaylist(text: string, baseUrl: string): HlsPlaylist {
  if (!text.trimStart().startsWith('#EXTM3U'))
    throw new StreamRefusal('not-a-playlist', `${shown(baseUrl)} is not an HLS playlist (no #EXTM3U)`);
  checkPlaylistSize(text, baseUrl);
  const parser = new Parser();
  parser.push(text);
  parser.end();
  const manifest = parser.manifest;
  if (manifest.contentProtection && Object.keys(manifest.contentProtection).length > 0) {
    throw new StreamRefusal(
      'drm',
      'this stream is protected by DRM (FairPlay, PlayReady or Widevine): Stitch does not download protected streams',
    );
  }
  const absolute = (uri: string) => new URL(uri, baseUrl).href;
  if (manifest.playlists && manifest.playlists.length > 0) {
    if (manifest.playlists.length > MAX_VARIANT_ENTRIES) {
      throw new StreamBoundsError(
        `the playlist ${shown(baseUrl)} lists ${manifest.playlists.length} variants and hosts, more than the ${MAX_VARIANT_ENTRIES} Stitch reads`,
      );
    }
    return { kind: 'master', variants: variantsOf(manifest, absolute) };
  }
  const sequence = manifest.mediaSequence ?? 0;
  const segments = manifest.segments.map((segment, index): HlsSegment => {
    const key = segment.key;
    if (key && key.method !== 'AES-128') {
      throw new StreamRefusal(
        'drm',
        `this stream is encrypted with ${key.method}, a DRM scheme: Stitch downloads clear streams and AES-128 only`,
      );
    }
    const where = `segment ${index + 1} of ${shown(baseUrl)}`;
    if (!(segment.duration >= 0 && Number.isFinite(segment.duration))) throw new StreamBoundsError(`${where} has no valid duration`);
    for (const range of [segment.byterange, segment.map?.byterange]) {
      if (range && !(Number.isSafeInteger(range.offset + range.length) && range.offset >= 0 && range.length > 0)) {
        throw new StreamBoundsError(`${where} has a byte range of ${range.length}@${range.offset}, which cannot be read`);
      }
    }
    return {
      uri: absolute(segment.uri),
      duration: segment.duration,
      sequence: sequence + index,
      ...(segment.byterange ? { byterange: { offset: segment.byterange.offset, length: segment.byterange.length } } : {}),
      ...(key ? { key: { uri: absolute(key.uri), iv: key.iv ? ivHex(key.iv) : sequenceIv(sequence + index) } } : {}),
      ...(segment.map
        ? { map: { uri: absolute(segment.map.uri), ...(segment.map.byterange ? { byterange: segment.map.byterange } : {}) } }
        : {}),
    };
  });
  const durationSeconds = segments.reduce((sum, segment) => sum + segment.duration, 0);
  const live = !manifest.endList && manifest.playlistType !== 'VOD';
  return { kind: 'media', segments, live, durationSeconds, targetSeconds: manifest.targetDuration ?? 6 };
}

/** Variants with the same bandwidth, resolution and codecs are one variant served by several hosts. */
function variantsOf(manifest: Manifest, absolute: (uri: string) => string): HlsVariant[] {
  const audioGroups = manifest.mediaGroups?.AUDIO ?? {};
  const variants = new Map<string, HlsVariant>();
  for (const playlist of manifest.playlists ?? []) {
    const { BANDWIDTH: bandwidth, RESOLUTION: resolution, CODECS: codecs, AUDIO: audio } = playlist.attributes;
    const group = audio === undefined ? undefined : audioGroups[audio];
    const separateAudio = group !== undefined && Object.values(group).some((rendition) => rendition.uri !== undefined);
    const renditions = renditionUris(manifest, playlist.attributes, absolute);
    const key = JSON.stringify([bandwidth, resolution?.width, resolution?.height, codecs, audio]);
    const known = variants.get(key);
    const uri = absolute(playlist.uri);
    if (known) {
      if (!known.uris.includes(uri)) known.uris.push(uri);
      continue;
    }
    variants.set(key, { uris: [uri], bandwidth, resolution, codecs, separateAudio, ...(renditions.length > 0 ? { renditions } : {}) });
  }
  return [...variants.values()];
}

/** The URIs of the EXT-X-MEDIA renditions a variant's groups (AUDIO, VIDEO, SUBTITLES) name. */
function renditionUris(manifest: Manifest, attributes: Record<string, unknown>, absolute: (uri: string) => string): string[] {
  const uris: string[] = [];
  for (const type of ['AUDIO', 'VIDEO', 'SUBTITLES'] as const) {
    const id = attributes[type];
    const group = typeof id === 'string' ? manifest.mediaGroups?.[type]?.[id] : undefined;
    for (const rendition of Object.values(group ?? {})) if (rendition.uri !== undefined) uris.push(absolute(rendition.uri));
  }
  return uris;
}

/** The variant a download takes unless the user chose: the highest bandwidth (then resolution). */
export function bestVariant(variants: readonly HlsVariant[]): HlsVariant | undefined {
  const pixels = (variant: HlsVariant) => (variant.resolution ? variant.resolution.width * variant.resolution.height : 0);
  return [...variants].sort((a, b) => (b.bandwidth ?? 0) - (a.bandwidth ?? 0) || pixels(b) - pixels(a))[0];
}

function ivHex(iv: Uint32Array): string {
  return [...iv].map((word) => word.toString(16).padStart(8, '0')).join('');
}
