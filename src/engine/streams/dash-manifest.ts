import { parse, type MpdPlaylist } from 'mpd-parser';
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
 * Refused with a StreamRefusal: DRM (ContentProtection), a live stream (type="dynamic"), none.
 */
export function parseDashManifest(text: string, url: string): DashManifest {
  let manifest;
  try {
    manifest = parse(text, { manifestUri: url });
  } catch (error) {
    throw new StreamRefusal('not-a-playlist', `${url} is not a DASH manifest Stitch can read (${(error as Error).message})`);
  }
  const soundGroups = Object.values(manifest.mediaGroups.AUDIO ?? {}).flatMap((group) => Object.values(group));
  const sounds = soundGroups[0]?.playlists ?? [];
  const all = [...manifest.playlists, ...sounds];
  if (all.length === 0) throw new StreamRefusal('empty', `${url} lists no representation of the stream`);
  if (all.some((playlist) => playlist.contentProtection && Object.keys(playlist.contentProtection).length > 0)) {
    throw new StreamRefusal('drm', 'this stream is protected by DRM: Stitch does not download protected streams');
  }
  if (all.some((playlist) => !playlist.endList)) {
    throw new StreamRefusal('live-dash', 'this is a live DASH stream (its manifest is dynamic): Stitch records live HLS streams only');
  }
  // An audio-only manifest lists its sound as playlists of its own.
  const audioOnly = sounds.length === 0 && manifest.playlists.every((playlist) => !playlist.attributes.RESOLUTION);
  const byBandwidth = (a: DashRepresentation, b: DashRepresentation) => (b.variant.bandwidth ?? 0) - (a.variant.bandwidth ?? 0);
  return {
    pictures: audioOnly ? [] : manifest.playlists.map(representation).sort(byBandwidth),
    sounds: (audioOnly ? manifest.playlists : sounds).map(representation).sort(byBandwidth),
    durationSeconds: manifest.duration,
  };
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
    return { variant, init: resource(sidx.map), segments: { index: { uri: sidx.resolvedUri, byterange: sidx.byterange } } };
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
  return from.byterange
    ? { uri: from.resolvedUri, byterange: { offset: from.byterange.offset, length: from.byterange.length } }
    : { uri: from.resolvedUri };
}
