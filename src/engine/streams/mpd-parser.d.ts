// mpd-parser (videojs) ships no types: what Stitch reads of its output, which has m3u8-parser's shape.
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
  export function parse(manifest: string, options: { manifestUri: string }): MpdManifest;
}
