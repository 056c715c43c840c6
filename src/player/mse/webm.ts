import { readElementHeader, readFloat, readString, readUint, UNKNOWN_SIZE, forEachChild } from './ebml';
import { Unsupported, type MediaSegments, type StoredReader } from './segments';

const EBML = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const SEEK_HEAD = 0x114d9b74;
const SEEK = 0x4dbb;
const SEEK_ID = 0x53ab;
const SEEK_POSITION = 0x53ac;
const INFO = 0x1549a966;
const TIMECODE_SCALE = 0x2ad7b1;
const DURATION = 0x4489;
const TRACKS = 0x1654ae6b;
const TRACK_ENTRY = 0xae;
const TRACK_TYPE = 0x83;
const CODEC_ID = 0x86;
const CUES = 0x1c53bb6b;
const CUE_POINT = 0xbb;
const CUE_TIME = 0xb3;
const CUE_TRACK_POSITIONS = 0xb7;
const CUE_CLUSTER_POSITION = 0xf1;
const CLUSTER = 0x1f43b675;

/** The first read of the head; doubled until the first Cluster is found. */
const FIRST_HEAD_READ = 4 * 1024;
/** The longest head (everything before the first Cluster) read before giving up. */
const MAX_HEAD = 8 * 1024 * 1024;
/** Enough for any element header (4-byte ID + 8-byte size). */
const HEADER_BYTES = 12;

/** Matroska codec IDs that MSE accepts in WebM, as codecs-parameter names. */
const CODECS: Record<string, string> = {
  V_VP8: 'vp8',
  V_VP9: 'vp9',
  V_AV1: 'av01.0.08M.08',
  A_OPUS: 'opus',
  A_VORBIS: 'vorbis',
};

export interface WebmHead {
  /** Offset of the first Cluster: the bytes before it are the init segment. */
  firstCluster: number;
  /** Offset of the Segment's data: Cues and SeekHead positions count from here. */
  segmentData: number;
  /** Nanoseconds per timecode unit. */
  timecodeScale: number;
  durationSeconds?: number;
  /** Absolute offset of the Cues (from the SeekHead), if announced. */
  cues?: number;
  /** Codec IDs of the tracks, and whether one is video. */
  codecIds: string[];
  hasVideo: boolean;
}

/**
 * Parses the head of a WebM file. Returns undefined when `bytes` ends before the first
 * Cluster (read more); throws Unsupported for what MSE cannot take.
 */
export function parseWebmHead(bytes: Uint8Array): WebmHead | undefined {
  const ebml = readElementHeader(bytes, 0);
  if (!ebml) return undefined;
  if (ebml.id !== EBML) throw new Unsupported('unreadable', 'not a WebM file');
  const segmentAt = ebml.headerLength + ebml.size;
  const segment = readElementHeader(bytes, segmentAt);
  if (!segment) return undefined;
  if (segment.id !== SEGMENT) throw new Unsupported('unreadable', 'not a WebM file (no Segment)');
  const segmentData = segmentAt + segment.headerLength;
  const head: WebmHead = { firstCluster: -1, segmentData, timecodeScale: 1_000_000, codecIds: [], hasVideo: false };
  let duration: number | undefined;
  for (let pos = segmentData; ;) {
    const child = readElementHeader(bytes, pos);
    if (!child) return undefined;
    if (child.id === CLUSTER) {
      head.firstCluster = pos;
      break;
    }
    if (child.size === UNKNOWN_SIZE) throw new Unsupported('layout', 'a WebM element of unknown size before the first Cluster');
    const dataStart = pos + child.headerLength;
    const dataEnd = dataStart + child.size;
    if (dataEnd > bytes.length) return undefined;
    if (child.id === INFO) {
      forEachChild(bytes, dataStart, dataEnd, (e, at) => {
        if (e.id === TIMECODE_SCALE) head.timecodeScale = readUint(bytes, at, e.size);
        if (e.id === DURATION) duration = readFloat(bytes, at, e.size);
      });
    } else if (child.id === TRACKS) {
      forEachChild(bytes, dataStart, dataEnd, (track, trackAt) => {
        if (track.id !== TRACK_ENTRY) return;
        forEachChild(bytes, trackAt, trackAt + track.size, (e, at) => {
          if (e.id === CODEC_ID) head.codecIds.push(readString(bytes, at, e.size));
          if (e.id === TRACK_TYPE && readUint(bytes, at, e.size) === 1) head.hasVideo = true;
        });
      });
    } else if (child.id === SEEK_HEAD) {
      forEachChild(bytes, dataStart, dataEnd, (seek, seekAt) => {
        if (seek.id !== SEEK) return;
        let id = 0;
        let position: number | undefined;
        forEachChild(bytes, seekAt, seekAt + seek.size, (e, at) => {
          if (e.id === SEEK_ID) id = readUint(bytes, at, e.size);
          if (e.id === SEEK_POSITION) position = readUint(bytes, at, e.size);
        });
        if (id === CUES && position !== undefined) head.cues = segmentData + position;
      });
    }
    pos = dataEnd;
  }
  if (duration !== undefined && duration > 0) head.durationSeconds = (duration * head.timecodeScale) / 1e9;
  return head;
}

/** The codecs parameter of the file's tracks, or Unsupported (e.g. Matroska with H.264, which MSE refuses). */
export function webmMime(head: WebmHead): string {
  const codecs = head.codecIds.map((id) => {
    const codec = CODECS[id];
    if (!codec) throw new Unsupported('codec', `this WebM/Matroska file uses ${id}, which Media Source playback does not take`, id);
    return codec;
  });
  if (codecs.length === 0) throw new Unsupported('unreadable', 'this WebM file has no tracks');
  return `${head.hasVideo ? 'video' : 'audio'}/webm; codecs="${codecs.join(',')}"`;
}

/** Cue points: media time (seconds) → absolute offset of the Cluster holding a keyframe there. */
export function parseCues(bytes: Uint8Array, cuesAt: number, head: WebmHead): { seconds: number; offset: number }[] {
  const cues = readElementHeader(bytes, 0);
  if (!cues || cues.id !== CUES) throw new Error(`no Cues at byte ${cuesAt}`);
  const points: { seconds: number; offset: number }[] = [];
  forEachChild(bytes, cues.headerLength, cues.headerLength + cues.size, (point, pointAt) => {
    if (point.id !== CUE_POINT) return;
    let time: number | undefined;
    let cluster: number | undefined;
    forEachChild(bytes, pointAt, pointAt + point.size, (e, at) => {
      if (e.id === CUE_TIME) time = readUint(bytes, at, e.size);
      if (e.id === CUE_TRACK_POSITIONS) {
        forEachChild(bytes, at, at + e.size, (p, pAt) => {
          if (p.id === CUE_CLUSTER_POSITION) cluster ??= readUint(bytes, pAt, p.size);
        });
      }
    });
    if (time !== undefined && cluster !== undefined)
      points.push({ seconds: (time * head.timecodeScale) / 1e9, offset: head.segmentData + cluster });
  });
  return points.sort((a, b) => a.seconds - b.seconds);
}

/**
 * WebM for MSE: the head as the init segment, then each Cluster in pieces as its blocks are stored
 * (its header with the blocks stored so far, then the next blocks as they are); Cues for seeking.
 * Firefox plays a Cluster appended in pieces cut between its blocks, so playback starts before the
 * whole Cluster (5 s of ffmpeg's media) is stored; cut inside a block, it drops frames.
 */
export async function openWebm(reader: StoredReader): Promise<MediaSegments> {
  let head: WebmHead | undefined;
  // ffmpeg's head is under 1 KiB: reading 64 KiB first made a low-bitrate file wait seconds for bytes it did not need.
  for (let length = FIRST_HEAD_READ; !head; length *= 2) {
    const bytes = await reader.read(0, Math.min(reader.size, length));
    head = parseWebmHead(bytes);
    if (!head && (length >= MAX_HEAD || length >= reader.size))
      throw new Unsupported('layout', 'no Cluster found in the head of this WebM file');
  }
  const found = head;
  const mime = webmMime(found);
  const init = await reader.read(0, found.firstCluster);
  let cues: Promise<{ seconds: number; offset: number }[]> | undefined;
  /** The Cluster the last piece came from: a later piece of it continues it. */
  let cluster = { start: -1, end: -1 };

  return {
    mime,
    init,
    durationSeconds: found.durationSeconds,
    firstSegment: found.firstCluster,
    async segmentAt(offset) {
      if (offset > cluster.start && offset < cluster.end) return clusterPiece(reader, offset, offset, cluster.end);
      // Skip what is not a Cluster (Cues, Tags, Void between or after them).
      for (let pos = offset; pos < reader.size;) {
        const header = readElementHeader(await reader.read(pos, pos + HEADER_BYTES), 0);
        if (!header) return undefined;
        if (header.size === UNKNOWN_SIZE) throw new Unsupported('layout', 'this WebM file has Clusters of unknown size (a live stream)');
        const end = pos + header.headerLength + header.size;
        if (header.id === CLUSTER) {
          cluster = { start: pos, end };
          return clusterPiece(reader, pos, pos + header.headerLength, end);
        }
        pos = end;
      }
      return undefined;
    },
    restartAt(offset) {
      return offset > cluster.start && offset < cluster.end ? cluster.start : offset;
    },
    async offsetFor(seconds) {
      if (found.cues === undefined) return undefined;
      const at = found.cues;
      cues ??= (async () => {
        const header = readElementHeader(await reader.read(at, at + HEADER_BYTES), 0);
        if (!header || header.id !== CUES || header.size === UNKNOWN_SIZE) return [];
        return parseCues(await reader.read(at, at + header.headerLength + header.size), at, found);
      })();
      const points = await cues;
      let best: number | undefined;
      for (const point of points) if (point.seconds <= seconds + 1e-3) best = point.offset;
      return best ?? points[0]?.offset;
    },
  };
}

/**
 * The piece of a Cluster from `start` (its header, or a block boundary inside it) to `end` (the
 * Cluster's): the header if any, then the whole elements from `children` on that are stored, at
 * least one (it waits for the first).
 */
async function clusterPiece(
  reader: StoredReader,
  start: number,
  children: number,
  end: number,
): Promise<{ bytes: Uint8Array; next: number }> {
  if (children >= end) return { bytes: await reader.read(start, end), next: end };
  for (;;) {
    const stored = await reader.readAvailable(start, end);
    let cut = children - start;
    forEachChild(stored, cut, stored.length, (header, data) => void (cut = data + header.size));
    if (cut > children - start) return { bytes: stored.subarray(0, cut), next: start + cut };
    const first = readElementHeader(await reader.read(start, Math.min(end, children + HEADER_BYTES)), children - start);
    if (!first || first.size === UNKNOWN_SIZE) throw new Unsupported('layout', 'a WebM Cluster holds an element of unknown size');
    await reader.read(start, Math.min(end, children + first.headerLength + first.size));
  }
}
