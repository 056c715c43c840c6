import { bytesToHex } from '../integrity/digests';
import { box, children, concat, readBoxHeader, u32, type Box } from './mp4-boxes';

/**
 * Joining a DASH stream's separate picture and sound into one fragmented MP4 without touching
 * their media: one initialization section holding both tracks (muxInit), then each track's
 * fragments as the server sent them, in time order. Only a few bytes of the fragments change, in
 * place: the sound's track number where it equals the picture's, and each segment index (`sidx`,
 * which indexes one track's segment alone) turned into padding (`free`). So every segment keeps its
 * length, the joined file is laid out before any byte of it is fetched, and each range of it is
 * still read straight from the segments (stream-fetch.ts applies the patches).
 */

/** Bytes to write over a part's own, at `at` within it: `hex`. */
export interface BytePatch {
  at: number;
  hex: string;
}

/** A fragment the muxer cannot place (its bytes would have to move), or an init that is not one track. */
export class UnmuxableStream extends Error {
  override readonly name = 'UnmuxableStream';
}

interface InitTrack {
  ftyp: Box | undefined;
  mvhd: Box;
  trak: Box;
  tkhd: Box;
  trex: Box;
  trackId: number;
  /** The movie's timescale (tkhd and edit list durations are in it). */
  timescale: number;
}

/** The one track of an fMP4 initialization section (ftyp, moov with mvhd, one trak, mvex with its trex). */
function initTrack(bytes: Uint8Array, what: string): InitTrack {
  const top = children(bytes, 0, bytes.length);
  const moov = top.find((b) => b.type === 'moov');
  if (!moov) throw new UnmuxableStream(`the ${what}'s initialization section has no movie box`);
  const inMoov = children(bytes, moov.data, moov.end);
  const traks = inMoov.filter((b) => b.type === 'trak');
  const mvhd = inMoov.find((b) => b.type === 'mvhd');
  const mvex = inMoov.find((b) => b.type === 'mvex');
  const trex = mvex && children(bytes, mvex.data, mvex.end).find((b) => b.type === 'trex');
  const tkhd = traks[0] && children(bytes, traks[0].data, traks[0].end).find((b) => b.type === 'tkhd');
  if (traks.length !== 1 || !mvhd || !trex || !tkhd) {
    throw new UnmuxableStream(`the ${what}'s initialization section is not one fragmented track`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v1 = (b: Box) => bytes[b.data] === 1;
  return {
    ftyp: top.find((b) => b.type === 'ftyp'),
    mvhd,
    trak: traks[0]!,
    tkhd,
    trex,
    trackId: view.getUint32(tkhd.data + (v1(tkhd) ? 20 : 12)),
    timescale: view.getUint32(mvhd.data + (v1(mvhd) ? 20 : 12)),
  };
}

const slice = (bytes: Uint8Array, b: Box) => bytes.slice(b.start, b.end);

export interface MuxedInit {
  bytes: Uint8Array;
  /** The sound's fragments name their track `from`; in the joined file it is `to` (equal when unchanged). */
  soundTrack: { from: number; to: number };
}

/**
 * One initialization section for both tracks: the picture's file type and movie header, its
 * track, then the sound's track (renumbered if it has the picture's number, its durations put in
 * the picture's movie timescale), and both tracks' fragment defaults.
 */
export function muxInit(picture: Uint8Array, sound: Uint8Array): MuxedInit {
  const video = initTrack(picture, 'picture');
  const audio = initTrack(sound, 'sound');
  const to = audio.trackId === video.trackId ? video.trackId + 1 : audio.trackId;

  const mvhd = slice(picture, video.mvhd);
  // next_track_ID, the movie header's last field.
  new DataView(mvhd.buffer).setUint32(mvhd.length - 4, Math.max(video.trackId, to) + 1);

  const trak = slice(sound, audio.trak);
  const trakView = new DataView(trak.buffer);
  const at = (b: Box) => b.start - audio.trak.start;
  const tkhdV1 = sound[audio.tkhd.data] === 1;
  trakView.setUint32(at(audio.tkhd) + (audio.tkhd.data - audio.tkhd.start) + (tkhdV1 ? 20 : 12), to);
  if (audio.timescale !== video.timescale) rescaleTrack(trak, audio.timescale, video.timescale);

  const trex = slice(sound, audio.trex);
  new DataView(trex.buffer).setUint32(audio.trex.data - audio.trex.start + 4, to);

  const moov = box('moov', mvhd, slice(picture, video.trak), trak, box('mvex', slice(picture, video.trex), trex));
  const ftyp = video.ftyp ? slice(picture, video.ftyp) : new Uint8Array(0);
  return { bytes: concat([ftyp, moov]), soundTrack: { from: audio.trackId, to } };
}

/** A track's durations in the movie's timescale (its header's and its edit list's), from one timescale to another. */
function rescaleTrack(trak: Uint8Array, from: number, to: number): void {
  const view = new DataView(trak.buffer, trak.byteOffset, trak.byteLength);
  const scale = (value: number) => Math.round((value * to) / from);
  const inTrak = children(trak, 8, trak.length);
  const tkhd = inTrak.find((b) => b.type === 'tkhd')!;
  if (trak[tkhd.data] === 1) view.setBigUint64(tkhd.data + 28, BigInt(scale(Number(view.getBigUint64(tkhd.data + 28)))));
  else view.setUint32(tkhd.data + 20, scale(view.getUint32(tkhd.data + 20)));
  const edts = inTrak.find((b) => b.type === 'edts');
  const elst = edts && children(trak, edts.data, edts.end).find((b) => b.type === 'elst');
  if (!elst) return;
  const v1 = trak[elst.data] === 1;
  const count = view.getUint32(elst.data + 4);
  for (let i = 0, entry = elst.data + 8; i < count; i++, entry += v1 ? 20 : 12) {
    if (v1) view.setBigUint64(entry, BigInt(scale(Number(view.getBigUint64(entry)))));
    else view.setUint32(entry, scale(view.getUint32(entry)));
  }
}

/** Bytes asked at once while walking a segment's boxes: its first boxes (styp, sidx, moof) fit in them. */
export const SEGMENT_SCAN_BYTES = 8 * 1024;

const FREE = bytesToHex(new TextEncoder().encode('free'));
/** tfhd's flag: the fragment's data offsets are absolute in its file (they would point elsewhere in the joined one). */
const BASE_DATA_OFFSET_PRESENT = 0x000001;

/**
 * The patches a media segment needs to join the muxed file: each `sidx` becomes `free`, and each
 * track fragment of track `retrack.from` is renumbered `retrack.to`. Walks the segment's top-level
 * boxes from `first` (its first bytes), reading further with `read(offset, length)` only where a box
 * header or a movie fragment lies beyond what was read; media data is never read.
 */
export async function segmentPatches(
  first: Uint8Array,
  size: number,
  read: (offset: number, length: number) => Promise<Uint8Array>,
  retrack?: { from: number; to: number },
): Promise<BytePatch[]> {
  let window = { start: 0, bytes: first };
  const bytesAt = async (at: number, length: number): Promise<Uint8Array> => {
    const from = at - window.start;
    if (from >= 0 && from + length <= window.bytes.length) return window.bytes.subarray(from, from + length);
    window = { start: at, bytes: await read(at, Math.max(length, SEGMENT_SCAN_BYTES)) };
    if (window.bytes.length < length) throw new UnmuxableStream(`a segment ended at byte ${at + window.bytes.length} inside a box`);
    return window.bytes.subarray(0, length);
  };
  const patches: BytePatch[] = [];
  for (let pos = 0; pos < size;) {
    const head = readBoxHeader(await bytesAt(pos, Math.min(16, size - pos)), 0, pos, size);
    if (!head || head.end > size) throw new UnmuxableStream(`a segment's box at byte ${pos} runs past its end`);
    if (head.type === 'sidx') patches.push({ at: pos + 4, hex: FREE });
    if (head.type === 'moof') patches.push(...fragmentPatches(await bytesAt(pos, head.end - pos), pos, retrack));
    pos = head.end;
  }
  return patches;
}

function fragmentPatches(moof: Uint8Array, at: number, retrack: { from: number; to: number } | undefined): BytePatch[] {
  const view = new DataView(moof.buffer, moof.byteOffset, moof.byteLength);
  const root = readBoxHeader(moof, 0)!;
  const patches: BytePatch[] = [];
  for (const traf of children(moof, root.data, root.end).filter((b) => b.type === 'traf')) {
    const tfhd = children(moof, traf.data, traf.end).find((b) => b.type === 'tfhd');
    if (!tfhd) throw new UnmuxableStream('a track fragment has no header');
    const flags = view.getUint32(tfhd.data) & 0xffffff;
    if (flags & BASE_DATA_OFFSET_PRESENT)
      throw new UnmuxableStream("a fragment's data offsets are absolute: its bytes cannot be joined as they are");
    if (retrack && retrack.from !== retrack.to && view.getUint32(tfhd.data + 4) === retrack.from) {
      patches.push({ at: at + tfhd.data + 4, hex: bytesToHex(u32(retrack.to)) });
    }
  }
  return patches;
}

/** `chunk` (the part's bytes from `at`) with the patches that fall in it written over: a copy if any does. */
export function patched(chunk: Uint8Array, at: number, patches: readonly BytePatch[] | undefined): Uint8Array {
  let out = chunk;
  for (const patch of patches ?? []) {
    const length = patch.hex.length / 2;
    if (patch.at + length <= at || patch.at >= at + chunk.length) continue;
    if (out === chunk) out = chunk.slice();
    for (let i = 0; i < length; i++) {
      const target = patch.at + i - at;
      if (target >= 0 && target < out.length) out[target] = parseInt(patch.hex.slice(2 * i, 2 * i + 2), 16);
    }
  }
  return out;
}

/** A segment index (`sidx`, SegmentBase's): each subsegment's size and duration, from `first` bytes after the index. */
export interface SegmentIndex {
  /** Bytes from the end of the index box to the first subsegment. */
  firstOffset: number;
  /** The index box's own size (the subsegments are counted from its end). */
  boxSize: number;
  references: { size: number; seconds: number }[];
}

export function readSegmentIndex(bytes: Uint8Array): SegmentIndex {
  const sidx = readBoxHeader(bytes, 0);
  if (!sidx || sidx.type !== 'sidx' || sidx.end > bytes.length) throw new UnmuxableStream('the segment index is not a whole sidx box');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const v1 = bytes[sidx.data] === 1;
  const timescale = view.getUint32(sidx.data + 8);
  const firstOffset = v1 ? Number(view.getBigUint64(sidx.data + 20)) : view.getUint32(sidx.data + 16);
  const countAt = sidx.data + (v1 ? 30 : 22);
  const count = view.getUint16(countAt);
  const references: SegmentIndex['references'] = [];
  for (let i = 0, at = countAt + 2; i < count; i++, at += 12) {
    const word = view.getUint32(at);
    if (word >>> 31) throw new UnmuxableStream('the segment index points at further indexes: Stitch reads one level only');
    references.push({ size: word & 0x7fffffff, seconds: view.getUint32(at + 4) / timescale });
  }
  return { firstOffset, boxSize: sidx.end, references };
}
