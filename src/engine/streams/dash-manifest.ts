import { inheritAttributes, stringToMpdXml, toM3u8, toPlaylists, type MpdManifest, type MpdPlaylist } from 'mpd-parser';
import { sourceRefusal } from '../http/request-trust';
import { checkImpliedSegments, checkMpdDocument, checkMpdText } from './dash-bounds';
import { StreamRefusal, typeOrPath, type HlsResource, type HlsVariant } from './hls-playlist';

/** One representation of a DASH stream: its initialization section and its segments, or the index that lists them. */
export interface DashRepresentation {
  /** Its quality, in the form the pages and the chooser know (an HLS variant's). */
  variant: HlsVariant;
  init: HlsResource;
  /** The segments, each a resource or a range of one; or, for SegmentBase, the segment index to read them from. */
  segments:
    | { uri: string; byterange?: HlsResource['byterange']; duration: number }[]
    | { index: HlsResource & { byterange: { offset: number; length: number } } };
}

export interface DashManifest {
  /** The picture's representations, the best first (an audio-only stream has none). */
  pictures: DashRepresentation[];
  /** The sound's representations (of the default group), the best first. */
  sounds: DashRepresentation[];
  durationSeconds: number;
}

const MANIFEST_TYPES = new Set(['application/dash+xml', 'video/vnd.mpeg.dash.mpd']);

/** Whether a response is a DASH manifest: by its Content-Type, else by its path's `.mpd`. */
export function looksLikeDashManifest(url: string, contentType: string | undefined): boolean {
  return typeOrPath(url, contentType, MANIFEST_TYPES, /\.mpd$/i);
}

/** Whether a manifest's text is DASH's (an MPD document) rather than an HLS playlist. */
export function isDashText(text: string): boolean {
  return /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<MPD[\s>]/.test(text);
}

/**
 * Reads a DASH manifest (with videojs's mpd-parser) into its picture and sound representations.
 * Refused with a StreamRefusal: DRM (ContentProtection), a live stream (type="dynamic"), none,
 * a manifest past a bound of dash-bounds.ts, and one naming a source Stitch does not request
 * (sourceRefusal: a public manifest's local addresses, an https manifest's plain-http ones).
 */
export function parseDashManifest(text: string, url: string): DashManifest {
  const manifest = readManifest(text, url);
  const soundGroups = Object.values(manifest.mediaGroups.AUDIO ?? {}).flatMap((group) => Object.values(group));
  const sounds = soundGroups[0]?.playlists ?? [];
  const all = [...manifest.playlists, ...sounds];
  if (all.length === 0) throw new StreamRefusal('empty', `${url} lists no representation of the stream`);
  if (all.some((playlist) => playlist.contentProtection && Object.keys(playlist.contentProtection).length > 0)) {
    throw new StreamRefusal('drm', 'this stream is protected by DRM: Stitch does not download protected streams');
  }
  if (all.some((playlist) => !playlist.endList)) throw liveDash();
  // An audio-only manifest lists its sound as playlists of its own.
  const audioOnly = sounds.length === 0 && manifest.playlists.every((playlist) => !playlist.attributes.RESOLUTION);
  const byBandwidth = (a: DashRepresentation, b: DashRepresentation) => (b.variant.bandwidth ?? 0) - (a.variant.bandwidth ?? 0);
  const pictures = audioOnly ? [] : manifest.playlists.map(representation).sort(byBandwidth);
  const chosenSounds = (audioOnly ? manifest.playlists : sounds).map(representation).sort(byBandwidth);
  refuseSources([...pictures, ...chosenSounds], url);
  return { pictures, sounds: chosenSounds, durationSeconds: manifest.duration };
}

/**
 * mpd-parser's steps (its `parse`), each checked before it runs: the text before the XML parser
 * (whose warnings about a broken document, one line each, are not printed), the document before
 * mpd-parser reads it, the representations before their segments are written out.
 */
function readManifest(text: string, url: string): MpdManifest {
  checkMpdText(text, url);
  const mpd = unreadable(url, () => quietly(() => stringToMpdXml(text)));
  // Before mpd-parser writes out a live manifest's segments up to now.
  if (mpd.getAttribute('type') === 'dynamic') throw liveDash();
  checkMpdDocument(mpd, url);
  const info = unreadable(url, () => inheritAttributes(mpd, { manifestUri: url }));
  if (info.representationInfo.length === 0) throw new StreamRefusal('empty', `${url} lists no representation of the stream`);
  checkImpliedSegments(info.representationInfo, url);
  return unreadable(url, () =>
    toM3u8({
      dashPlaylists: toPlaylists(info.representationInfo),
      locations: info.locations,
      contentSteering: info.contentSteeringInfo,
      eventStream: info.eventStream,
    }),
  );
}

const liveDash = () =>
  new StreamRefusal('live-dash', 'this is a live DASH stream (its manifest is dynamic): Stitch records live HLS streams only');

/** `work`'s result; mpd-parser's errors (a broken document, a missing attribute) are refusals in words. */
function unreadable<T>(url: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof StreamRefusal) throw error;
    throw new StreamRefusal('not-a-playlist', `${url} is not a DASH manifest Stitch can read (${(error as Error).message})`);
  }
}

/** `work` with console.warn and console.error silenced: xmldom writes a line for each flaw of a hostile document. */
function quietly<T>(work: () => T): T {
  const { warn, error } = console;
  console.warn = console.error = () => {};
  try {
    return work();
  } finally {
    console.warn = warn;
    console.error = error;
  }
}

/**
 * Every URL the representations name (initializations, segments, indexes, all their BaseURLs
 * resolved into them), checked as the door (request-trust.ts) will check each request, but now,
 * before any: a public manifest naming a local address, or an https one naming plain http, is
 * refused whole, in words that name the URL.
 */
function refuseSources(representations: readonly DashRepresentation[], url: string): void {
  for (const { init, segments } of representations) {
    const uris = Array.isArray(segments) ? segments.map((segment) => segment.uri) : [segments.index.uri];
    for (const uri of [init.uri, ...uris]) {
      const refusal = sourceRefusal(uri, url, { covered: false });
      if (refusal) throw new StreamRefusal('unsafe-source', `the DASH manifest ${url} names a source Stitch does not request: ${refusal}`);
    }
  }
}

function representation(playlist: MpdPlaylist, index: number): DashRepresentation {
  const { attributes } = playlist;
  const variant: HlsVariant = {
    // Representations share the manifest's URL: each is told apart by its id.
    uris: [`#${attributes.NAME ?? index}`],
    bandwidth: attributes.BANDWIDTH,
    resolution: attributes.RESOLUTION,
    codecs: attributes.CODECS,
    separateAudio: false,
  };
  const { sidx } = playlist;
  if (sidx?.byterange && sidx.map) {
    const { uri, byterange } = resource(sidx);
    return { variant, init: resource(sidx.map), segments: { index: { uri, byterange: byterange! } } };
  }
  const first = playlist.segments[0];
  if (!first?.map) throw new StreamRefusal('empty', `the representation ${attributes.NAME ?? index} lists no initialization and segments`);
  return {
    variant,
    init: resource(first.map),
    segments: playlist.segments.map((segment) => ({ ...resource(segment), duration: segment.duration })),
  };
}

function resource(from: { resolvedUri: string; byterange?: { offset: number; length: number } }): HlsResource {
  if (!from.byterange) return { uri: from.resolvedUri };
  const { offset, length } = from.byterange;
  // mpd-parser gives a BigInt past 2^53: no file is that large.
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length <= 0) {
    throw new StreamRefusal('not-a-playlist', `the DASH manifest gives ${from.resolvedUri} a byte range no file has`);
  }
  return { uri: from.resolvedUri, byterange: { offset, length } };
}
