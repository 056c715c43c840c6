import { box, concat, fullBox, u16, u32, u64 } from '../../engine/streams/mp4-boxes';
import { Unsupported, type MediaSegments, type StoredReader } from './segments';

/**
 * MP3 for MSE. Firefox's Media Source takes no `audio/mpeg` but takes MP3 in fragmented MP4
 * (`audio/mp4; codecs="mp3"`), so each MPEG audio frame becomes one sample: an init segment
 * written here (an `mp4a` track whose ES descriptor names MPEG audio), then a fragment of about a
 * second of frames per segment. The LAME/Xing frame (silence carrying the frame count and a
 * table of contents) is left out; it gives the duration, and its table the byte of a time in a
 * VBR file (a CBR file's bytes are proportional to time).
 */

/** Frames per fragment: about a second (1152 samples each at 44.1 kHz). */
export const FRAMES_PER_SEGMENT = 40;
/** A seek's byte estimate is searched this far for two frames in a row. */
const RESYNC_BYTES = 16 * 1024;
const TRACK_ID = 1;

const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES = [44100, 48000, 32000];

/** One MPEG-1/2/2.5 Layer III frame header. */
export interface FrameHeader {
  /** Bytes of the whole frame, header included. */
  length: number;
  sampleRate: number;
  /** PCM samples per channel it decodes to: 1152 (MPEG-1) or 576. */
  samples: number;
  channels: number;
  bitrate: number;
  mpeg1: boolean;
}

/** The Layer III frame header at `at`, or undefined if the bytes there are not one. */
export function frameHeader(bytes: Uint8Array, at: number): FrameHeader | undefined {
  if (at + 4 > bytes.length || bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const version = (bytes[at + 1]! >> 3) & 3; // 0: MPEG-2.5, 2: MPEG-2, 3: MPEG-1
  const layer = (bytes[at + 1]! >> 1) & 3; // 1: Layer III
  const bitrateIndex = bytes[at + 2]! >> 4;
  const rateIndex = (bytes[at + 2]! >> 2) & 3;
  if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const mpeg1 = version === 3;
  const bitrate = (mpeg1 ? BITRATES_V1 : BITRATES_V2)[bitrateIndex]! * 1000;
  const sampleRate = SAMPLE_RATES[rateIndex]! / (mpeg1 ? 1 : version === 2 ? 2 : 4);
  const padding = (bytes[at + 2]! >> 1) & 1;
  const samples = mpeg1 ? 1152 : 576;
  const length = Math.floor((samples / 8) * (bitrate / sampleRate)) + padding;
  return { length, sampleRate, samples, channels: bytes[at + 3]! >> 6 === 3 ? 1 : 2, bitrate, mpeg1 };
}

/** Two frames in a row from `at` (one alone is too easily a false sync in the middle of data). */
function framesAt(bytes: Uint8Array, at: number): FrameHeader | undefined {
  const first = frameHeader(bytes, at);
  if (!first) return undefined;
  const next = at + first.length;
  return next + 4 > bytes.length || frameHeader(bytes, next)?.sampleRate === first.sampleRate ? first : undefined;
}

/** What the Xing/Info (LAME) or VBRI frame says of the stream. */
interface VbrInfo {
  frames?: number;
  bytes?: number;
  /** Xing (VBR): the byte (in 256ths of `bytes`) at each percent of the duration. A CBR file's Info tag has one too, but its bytes are proportional to time. */
  toc?: Uint8Array;
}

/** The Xing/Info or VBRI tag in the frame at `at`, if that frame is one. */
function vbrInfo(bytes: Uint8Array, at: number, header: FrameHeader): VbrInfo | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sideInfo = header.mpeg1 ? (header.channels === 1 ? 17 : 32) : header.channels === 1 ? 9 : 17;
  const xing = at + 4 + sideInfo;
  const tag = String.fromCharCode(...bytes.subarray(xing, xing + 4));
  if (tag === 'Xing' || tag === 'Info') {
    const flags = view.getUint32(xing + 4);
    let p = xing + 8;
    const info: VbrInfo = {};
    if (flags & 1) {
      info.frames = view.getUint32(p);
      p += 4;
    }
    if (flags & 2) {
      info.bytes = view.getUint32(p);
      p += 4;
    }
    if (flags & 4 && tag === 'Xing') info.toc = bytes.slice(p, p + 100);
    return info;
  }
  const vbri = at + 4 + 32;
  if (String.fromCharCode(...bytes.subarray(vbri, vbri + 4)) === 'VBRI')
    return { bytes: view.getUint32(vbri + 10), frames: view.getUint32(vbri + 14) };
  return undefined;
}

/** Where the audio starts: after an ID3v2 tag (10 bytes, a syncsafe size, a footer when flagged). */
function id3v2Length(bytes: Uint8Array): number {
  if (bytes.length < 10 || String.fromCharCode(bytes[0]!, bytes[1]!, bytes[2]!) !== 'ID3') return 0;
  const size = ((bytes[6]! & 0x7f) << 21) | ((bytes[7]! & 0x7f) << 14) | ((bytes[8]! & 0x7f) << 7) | (bytes[9]! & 0x7f);
  return 10 + size + (bytes[5]! & 0x10 ? 10 : 0);
}

/** True when the file starts as an MP3 does: an ID3v2 tag or a Layer III frame. */
export function looksLikeMp3(head: Uint8Array): boolean {
  return id3v2Length(head) > 0 || frameHeader(head, 0) !== undefined;
}

export async function openMp3(reader: StoredReader): Promise<MediaSegments> {
  let dataStart = id3v2Length(await reader.read(0, 10));
  const head = await reader.read(dataStart, dataStart + RESYNC_BYTES);
  const skip = findFrames(head);
  if (skip === undefined) throw new Unsupported('unreadable', 'no MP3 audio frames found at the start of this file');
  dataStart += skip;
  const tagFrame = frameHeader(head, skip)!;
  const vbr = vbrInfo(head, skip, tagFrame);
  const audioStart = vbr ? dataStart + tagFrame.length : dataStart;
  // The tag's frame has the bitrate that holds it (ffmpeg's: 64 kbit/s), not the audio's.
  const first = (vbr && frameHeader(head, skip + tagFrame.length)) || tagFrame;
  const audioBytes = vbr?.bytes ? vbr.bytes - tagFrame.length : reader.size - audioStart;
  const secondsPerFrame = first.samples / first.sampleRate;
  const frames = vbr?.frames ?? Math.round((audioBytes * 8) / first.bitrate / secondsPerFrame);
  const bytesPerFrame = audioBytes / Math.max(1, frames);
  /** The frame number at offsets where a segment starts, for each fragment's decode time. */
  const frameAt = new Map<number, number>([[audioStart, 0]]);

  return {
    mime: 'audio/mp4; codecs="mp3"',
    init: initSegment(first),
    durationSeconds: frames * secondsPerFrame,
    firstSegment: audioStart,
    async segmentAt(offset) {
      if (offset >= reader.size) return undefined;
      // What is stored from the offset, at least one whole frame: a segment plays as soon as its frames are in.
      let bytes = await reader.readAvailable(offset, offset + FRAMES_PER_SEGMENT * (first.length + 1));
      if (bytes.length < 4) bytes = await reader.read(offset, offset + 4);
      const header = frameHeader(bytes, 0);
      if (!header) return undefined; // past the last frame: an ID3v1 tag, padding
      if (bytes.length < header.length) bytes = await reader.read(offset, offset + header.length);
      const samples: Uint8Array[] = [];
      let at = 0;
      for (
        let h: FrameHeader | undefined = header;
        h && at + h.length <= bytes.length && samples.length < FRAMES_PER_SEGMENT;
        h = frameHeader(bytes, at)
      ) {
        samples.push(bytes.subarray(at, at + h.length));
        at += h.length;
      }
      if (samples.length === 0) return undefined; // the file ends inside its last frame
      const index = frameAt.get(offset) ?? Math.round((offset - audioStart) / bytesPerFrame);
      frameAt.set(offset + at, index + samples.length);
      return { bytes: fragment(samples, index * first.samples, first.samples, index + 1), next: offset + at };
    },
    async offsetFor(seconds) {
      const share = Math.min(1, Math.max(0, seconds / (frames * secondsPerFrame)));
      const estimate = audioStart + Math.floor(byteShare(share, vbr?.toc) * audioBytes);
      const found = findFrames(await reader.read(estimate, estimate + RESYNC_BYTES));
      if (found === undefined) return undefined;
      // A CBR file's frame number follows from its byte; a VBR table's byte is at the time asked.
      const index = vbr?.toc ? seconds / secondsPerFrame + found / bytesPerFrame : (estimate + found - audioStart) / bytesPerFrame;
      frameAt.set(estimate + found, Math.round(index));
      return estimate + found;
    },
  };
}

/** The first offset in `bytes` where two frames follow each other. */
function findFrames(bytes: Uint8Array): number | undefined {
  for (let at = 0; at + 4 <= bytes.length; at++) if (framesAt(bytes, at)) return at;
  return undefined;
}

/** Share of the bytes at `share` of the duration: the Xing table's, or proportional (CBR). */
function byteShare(share: number, toc: Uint8Array | undefined): number {
  if (!toc) return share;
  const percent = Math.min(99, Math.floor(share * 100));
  const low = toc[percent]!;
  const high = percent < 99 ? toc[percent + 1]! : 256;
  return (low + (high - low) * (share * 100 - percent)) / 256;
}

const bytes = (...values: number[]) => new Uint8Array(values);
const UNITY_MATRIX = u32(0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000);

/** An MPEG-4 descriptor: tag, a one-byte size (all of these are small), payload. */
function descriptor(tag: number, ...parts: Uint8Array[]): Uint8Array {
  const payload = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(2 + payload);
  out[0] = tag;
  out[1] = payload;
  out.set(concat(parts), 2);
  return out;
}

/** ftyp + moov of one audio track whose samples are MP3 frames (esds object type 0x6B: MPEG-1 audio, 0x69: MPEG-2). */
export function initSegment(header: FrameHeader): Uint8Array {
  const esds = fullBox(
    'esds',
    0,
    0,
    descriptor(
      0x03,
      u16(TRACK_ID),
      bytes(0),
      descriptor(0x04, bytes(header.mpeg1 ? 0x6b : 0x69, 0x15, 0, 0, 0), u32(header.bitrate, header.bitrate)),
      descriptor(0x06, bytes(0x02)),
    ),
  );
  const mp4a = box(
    'mp4a',
    bytes(0, 0, 0, 0, 0, 0),
    u16(1), // data reference index
    u32(0, 0),
    u16(header.channels, 16, 0, 0),
    u32(header.sampleRate * 0x10000),
    esds,
  );
  const stbl = box(
    'stbl',
    fullBox('stsd', 0, 0, u32(1), mp4a),
    fullBox('stts', 0, 0, u32(0)),
    fullBox('stsc', 0, 0, u32(0)),
    fullBox('stsz', 0, 0, u32(0, 0)),
    fullBox('stco', 0, 0, u32(0)),
  );
  const minf = box('minf', fullBox('smhd', 0, 0, u32(0)), box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))), stbl);
  const hdlr = fullBox('hdlr', 0, 0, u32(0), bytes(0x73, 0x6f, 0x75, 0x6e), u32(0, 0, 0), bytes(0x53, 0x74, 0x69, 0x74, 0x63, 0x68, 0));
  const mdia = box('mdia', fullBox('mdhd', 0, 0, u32(0, 0, header.sampleRate, 0), u16(0x55c4, 0)), hdlr, minf);
  const tkhd = fullBox('tkhd', 0, 3, u32(0, 0, TRACK_ID, 0, 0, 0, 0), u16(0, 0, 0x0100, 0), UNITY_MATRIX, u32(0, 0));
  const mvhd = fullBox(
    'mvhd',
    0,
    0,
    u32(0, 0, 1000, 0, 0x10000),
    u16(0x0100, 0),
    u32(0, 0),
    UNITY_MATRIX,
    u32(0, 0, 0, 0, 0, 0, TRACK_ID + 1),
  );
  const mvex = box('mvex', fullBox('trex', 0, 0, u32(TRACK_ID, 1, 0, 0, 0)));
  const ftyp = box(
    'ftyp',
    bytes(0x69, 0x73, 0x6f, 0x6d),
    u32(0x200),
    bytes(0x69, 0x73, 0x6f, 0x6d, 0x69, 0x73, 0x6f, 0x36, 0x6d, 0x70, 0x34, 0x31),
  );
  return concat([ftyp, box('moov', mvhd, box('trak', tkhd, mdia), mvex)]);
}

/** moof + mdat of `frames`, the first decoded at `decodeTime` (in samples), each `duration` samples long. */
export function fragment(frames: Uint8Array[], decodeTime: number, duration: number, sequence: number): Uint8Array {
  // tfhd: default-base-is-moof (0x20000) and a default duration (0x8); trun: data offset (0x1) and sizes (0x200).
  const tfhd = fullBox('tfhd', 0, 0x20008, u32(TRACK_ID, duration));
  const tfdt = fullBox('tfdt', 1, 0, u64(decodeTime));
  const trunLength = 8 + 4 + 4 + 4 + 4 * frames.length;
  const mfhd = fullBox('mfhd', 0, 0, u32(sequence));
  const moofLength = 8 + mfhd.length + 8 + tfhd.length + tfdt.length + trunLength;
  const trun = fullBox('trun', 0, 0x201, u32(frames.length, moofLength + 8, ...frames.map((f) => f.length)));
  return concat([box('moof', mfhd, box('traf', tfhd, tfdt, trun)), box('mdat', ...frames)]);
}
