import { filenameFromUrl } from '../http/headers';
import type { BytePatch } from './fmp4-mux';

/**
 * A stream (an HLS playlist's segments, or a DASH stream's two tracks: dash-plan.ts) as one file: its parts laid end to end. The engine
 * downloads that file like any other, in blocks from every source at once; stream-fetch.ts
 * answers its range requests from the segments. Persisted in the job's state, so a reopened job
 * needs no second look at the playlists.
 */
export interface StreamPart {
  /** Bytes the part adds to the file: the segment's, or its plaintext when encrypted. */
  length: number;
  /** Where the part starts in its resource (EXT-X-BYTERANGE), else 0. */
  sourceOffset: number;
  /** The part's bytes in its resource: `length`, or the ciphertext's length when encrypted. */
  sourceLength: number;
  /** The resource's whole size as the primary source said it: a different one means it changed. */
  resourceSize?: number;
  /** AES-128-CBC: the key (an index into `keys`) and the IV, in hex. */
  key?: { index: number; iv: string };
  /** A segment's duration (its EXTINF); absent on an initialization section. */
  seconds?: number;
  /** A part made by Stitch (a DASH stream's joined initialization section), in hex: fetched from nowhere. */
  literal?: string;
  /** Bytes written over the segment's own as it is read (fmp4-mux.ts): a DASH track's fragments joining the other's. */
  patches?: BytePatch[];
  /** A DASH stream's sound segment, between the picture's: played with the picture segment before it. */
  sound?: true;
}

/** One host of the stream: its media playlist and, for each part, the URL it serves it at. */
export interface StreamSource {
  /** The media playlist: the job's URL (the first source) or one of its mirrors. */
  url: string;
  /** One per part. */
  uris: string[];
}

export interface StreamLayout {
  kind: 'hls' | 'dash';
  /** The playlist (or DASH manifest) the stream was asked for (a master playlist, or the media playlist itself). */
  playlist: string;
  /** The file's name: the playlist's, with the container's extension. */
  filename: string;
  contentType: string;
  durationSeconds: number;
  parts: StreamPart[];
  /** The primary first; the others are redundant hosts (mirrors) with the same segments. */
  sources: StreamSource[];
  /** AES-128 keys, in hex. */
  keys: string[];
}

/** AES's block: encrypted parts are whole blocks, and decrypt from any block boundary. */
export const AES_BLOCK = 16;

/** Where each part starts in the file, and the file's size (the last entry). */
export function partOffsets(layout: Pick<StreamLayout, 'parts'>): number[] {
  const offsets = [0];
  for (const part of layout.parts) offsets.push(offsets[offsets.length - 1]! + part.length);
  return offsets;
}

/** A piece of one part that a range of the file covers: part bytes [start, end). */
export interface PartPiece {
  index: number;
  start: number;
  end: number;
}

/** The pieces of parts that bytes [start, end) of the file are made of, in order. */
export function piecesOf(offsets: readonly number[], start: number, end: number): PartPiece[] {
  const pieces: PartPiece[] = [];
  // The last part starting at or before `start` (binary search: streams have thousands of parts).
  let low = 0;
  let high = offsets.length - 2;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (offsets[mid]! <= start) low = mid;
    else high = mid - 1;
  }
  for (let index = low; index < offsets.length - 1 && offsets[index]! < end; index++) {
    const partStart = offsets[index]!;
    const partEnd = offsets[index + 1]!;
    if (partEnd <= start) continue;
    pieces.push({ index, start: Math.max(start, partStart) - partStart, end: Math.min(end, partEnd) - partStart });
  }
  return pieces;
}

/** Validates a stored layout; undefined when it is not one this version understands. */
export function parseStreamLayout(value: unknown): StreamLayout | undefined {
  const layout = value as Partial<StreamLayout> | null;
  if (typeof layout !== 'object' || layout === null || (layout.kind !== 'hls' && layout.kind !== 'dash')) return undefined;
  const { parts, sources, keys } = layout;
  if (!Array.isArray(parts) || !Array.isArray(sources) || !Array.isArray(keys) || sources.length === 0) return undefined;
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  const partOk = (part: StreamPart) =>
    typeof part === 'object' &&
    part !== null &&
    count(part.length) &&
    count(part.sourceOffset) &&
    count(part.sourceLength) &&
    (part.key === undefined || (count(part.key.index) && part.key.index < keys.length && /^[0-9a-f]{32}$/.test(part.key.iv))) &&
    (part.seconds === undefined || (Number.isFinite(part.seconds) && part.seconds >= 0)) &&
    (part.literal === undefined || (/^([0-9a-f]{2})*$/.test(part.literal) && part.literal.length === 2 * part.length)) &&
    (part.patches === undefined ||
      (part.key === undefined &&
        Array.isArray(part.patches) &&
        part.patches.every((patch) => count(patch?.at) && /^([0-9a-f]{2})+$/.test(String(patch.hex)))));
  const sourceOk = (source: StreamSource) =>
    typeof source?.url === 'string' &&
    Array.isArray(source.uris) &&
    source.uris.length === parts.length &&
    source.uris.every((uri) => typeof uri === 'string');
  if (!parts.every(partOk) || !sources.every(sourceOk) || !keys.every((key) => /^[0-9a-f]{32}$/.test(String(key)))) return undefined;
  if (typeof layout.playlist !== 'string' || typeof layout.filename !== 'string' || typeof layout.contentType !== 'string')
    return undefined;
  return layout as StreamLayout;
}

/**
 * A stream's parts as a player plays them from the stored file: each one's length, and its duration
 * when it is a segment (an initialization section has none).
 */
export interface StreamTimeline {
  /** The whole stream's (the layout's). */
  durationSeconds: number;
  parts: { length: number; seconds?: number }[];
}

/** The layout's timeline; undefined when it has no segment durations (a layout stored before they were kept). */
export function timelineOf(layout: Pick<StreamLayout, 'parts' | 'durationSeconds'>): StreamTimeline | undefined {
  if (!layout.parts.some((part) => part.seconds !== undefined)) return undefined;
  const parts: StreamTimeline['parts'] = [];
  for (const { length, seconds, sound } of layout.parts) {
    const last = parts[parts.length - 1];
    // A DASH stream's sound segments play with the picture segment before them: one segment of both tracks.
    if (sound && last?.seconds !== undefined) last.length += length;
    else parts.push(seconds === undefined ? { length } : { length, seconds });
  }
  return { durationSeconds: layout.durationSeconds, parts };
}

/** The name a stream's file takes from its playlist's or manifest's URL, less that extension: `…/show/index.m3u8` → `index`. */
export function streamStem(url: string): string {
  return (filenameFromUrl(url) ?? 'stream').replace(/\.(m3u8?|mpd)$/i, '');
}
