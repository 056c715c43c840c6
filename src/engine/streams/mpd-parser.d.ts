// mpd-parser (videojs) ships no types: what Stitch calls and reads of it. Its steps are called one
// by one (index.js's `parse` does the same) so that dash-bounds.ts can check what each would do.
declare module 'mpd-parser' {
  export interface MpdResource {
    uri: string;
    resolvedUri: string;
    byterange?: { offset: number; length: number };
  }
  export interface MpdSegment extends MpdResource {
    duration: number;
    map?: MpdResource;
  }
  export interface MpdPlaylist {
    attributes: {
      NAME?: string;
      BANDWIDTH?: number;
      CODECS?: string;
      RESOLUTION?: { width: number; height: number };
    };
    segments: MpdSegment[];
    endList: boolean;
    /** A representation indexed by a segment index (SegmentBase): its range, and its initialization's. */
    sidx?: MpdResource & { map?: MpdResource; duration: number };
    contentProtection?: Record<string, unknown>;
  }
  export interface MpdManifest {
    duration: number;
    playlists: MpdPlaylist[];
    mediaGroups: { AUDIO?: Record<string, Record<string, { playlists: MpdPlaylist[] }>> };
  }
  /** A representation's attributes, inherited from its parents and parsed (parseAttributes.js). */
  export interface MpdAttributes {
    id?: string;
    bandwidth?: number;
    /** The BaseURLs of its levels, resolved against the manifest's URL. */
    baseUrl?: string;
    media?: string;
    /** @duration, in @timescale units. */
    duration?: number;
    timescale?: number;
    startNumber?: number;
    endNumber?: string | number;
    periodDuration?: number;
    /** The presentation's duration in seconds (0 when it says none). */
    sourceDuration: number;
  }
  export interface MpdTimelineEntry {
    d?: number;
    r?: number;
    t?: number;
  }
  /** One representation (one of its BaseURL alternatives) before its segments are written out. */
  export interface MpdRepresentationInfo {
    attributes: MpdAttributes;
    segmentInfo: {
      template?: Partial<MpdAttributes>;
      base?: Partial<MpdAttributes>;
      list?: Partial<MpdAttributes> & { segmentUrls?: { media?: string }[] };
      segmentTimeline?: MpdTimelineEntry[];
    };
  }
  export interface MpdInfo {
    representationInfo: MpdRepresentationInfo[];
    locations?: string[];
    contentSteeringInfo: unknown;
    eventStream: unknown[];
  }
  /** The document's MPD element (xmldom); throws on anything else. */
  export function stringToMpdXml(manifest: string): Element;
  export function inheritAttributes(mpd: Element, options: { manifestUri: string }): MpdInfo;
  /** Writes out every representation's segments. */
  export function toPlaylists(representations: MpdRepresentationInfo[]): unknown[];
  export function toM3u8(options: {
    dashPlaylists: unknown[];
    locations?: string[];
    contentSteering: unknown;
    eventStream: unknown[];
  }): MpdManifest;
}
