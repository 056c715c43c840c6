import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { children, readBoxHeader } from '../../../src/engine/streams/mp4-boxes';
import { FRAMES_PER_SEGMENT, frameHeader, openMp3 } from '../../../src/player/mse/mp3';
import type { MediaSegments } from '../../../src/player/mse/segments';
import { clip, MP3_SHORT, MP3_VBR_SHORT } from '../../support/clips';
import { reader } from './stored-fixture';

interface Fragment {
  decodeTime: number;
  sizes: number[];
  payload: Uint8Array;
}

/** A fragment's tfdt, trun sample sizes and mdat payload, read as a demuxer would. */
function parseFragment(bytes: Uint8Array): Fragment {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [moof, mdat] = children(bytes, 0, bytes.length);
  expect([moof?.type, mdat?.type]).toEqual(['moof', 'mdat']);
  const traf = children(bytes, moof!.data, moof!.end).find((b) => b.type === 'traf')!;
  const boxes = children(bytes, traf.data, traf.end);
  const tfdt = boxes.find((b) => b.type === 'tfdt')!;
  const trun = boxes.find((b) => b.type === 'trun')!;
  const count = view.getUint32(trun.data + 4);
  const dataOffset = view.getUint32(trun.data + 8);
  expect(moof!.start + dataOffset).toBe(mdat!.data);
  const sizes = Array.from({ length: count }, (_, i) => view.getUint32(trun.data + 12 + 4 * i));
  return { decodeTime: Number(view.getBigUint64(tfdt.data + 4)), sizes, payload: bytes.subarray(mdat!.data, mdat!.end) };
}

/** Every frame's offset in the file, walked header by header from the first audio frame. */
function frameOffsets(bytes: Uint8Array, from: number): number[] {
  const offsets: number[] = [];
  for (let at = from, h = frameHeader(bytes, at); h && at + h.length <= bytes.length; at += h.length, h = frameHeader(bytes, at))
    offsets.push(at);
  return offsets;
}

async function all(segments: MediaSegments, from: number): Promise<{ fragments: Fragment[]; end: number }> {
  const fragments: Fragment[] = [];
  let offset = from;
  for (let s = await segments.segmentAt(offset); s; s = await segments.segmentAt(offset)) {
    fragments.push(parseFragment(s.bytes));
    offset = s.next;
  }
  return { fragments, end: offset };
}

// A CBR frame's time follows from its byte, to a frame (24 ms); a VBR file's from its Xing table, whose
// entries are 256ths of the bytes at each percent of the duration: about one percent.
describe.each([
  ['CBR', MP3_SHORT, 0.03],
  ['VBR (Xing table)', MP3_VBR_SHORT, 0.2],
])('MP3 remuxed into fragmented MP4 for Firefox’s Media Source (%s, made by ffmpeg)', (_name, recipe, timing) => {
  it('writes an MPEG-audio mp4a track and fragments that carry every audio frame once, timed in order', async () => {
    const media = await clip(recipe);
    const bytes = new Uint8Array(readFileSync(media.path));
    const segments = await openMp3(reader(bytes));
    expect(segments.mime).toBe('audio/mp4; codecs="mp3"');
    expect(segments.durationSeconds).toBeCloseTo(20, 0);
    const moov = children(segments.init, 0, segments.init.length).find((b) => b.type === 'moov')!;
    expect(readBoxHeader(segments.init, moov.start)?.type).toBe('moov');
    // The sample entry: mp4a, whose decoder config names MPEG-1 audio (0x6B).
    const text = String.fromCharCode(...segments.init);
    expect(text).toContain('mp4a');
    expect(segments.init[text.indexOf('esds') + 4 + 4 + 2 + 3 + 2]).toBe(0x6b);

    const { fragments } = await all(segments, segments.firstSegment);
    const frames = frameOffsets(bytes, segments.firstSegment);
    const lastFrameEnd = frames.at(-1)! + frameHeader(bytes, frames.at(-1)!)!.length;
    // The payloads, end to end, are the file's audio frames, byte for byte.
    const payload = Buffer.concat(fragments.map((f) => f.payload));
    expect(payload.equals(Buffer.from(bytes.subarray(segments.firstSegment, lastFrameEnd)))).toBe(true);
    expect(fragments.flatMap((f) => f.sizes)).toHaveLength(frames.length);
    expect(Math.max(...fragments.map((f) => f.sizes.length))).toBe(FRAMES_PER_SEGMENT);
    for (let i = 1; i < fragments.length; i++)
      expect(fragments[i]!.decodeTime).toBe(fragments[i - 1]!.decodeTime + 1152 * fragments[i - 1]!.sizes.length);
  }, 60_000);

  it('seeks to a frame near the time asked, and times the fragment by that frame', async () => {
    const media = await clip(recipe);
    const bytes = new Uint8Array(readFileSync(media.path));
    const segments = await openMp3(reader(bytes));
    const frames = frameOffsets(bytes, segments.firstSegment);
    for (const seconds of [12.3, 3.1, 19]) {
      const offset = await segments.offsetFor(seconds);
      const index = frames.indexOf(offset!);
      expect(index, `a frame starts at the offset for ${seconds} s`).toBeGreaterThanOrEqual(0);
      // The frame's own time, from counting frames: near the time asked, and what the fragment says.
      const frameSeconds = (index * 1152) / 48000;
      expect(Math.abs(frameSeconds - seconds)).toBeLessThan(0.5);
      const { decodeTime } = parseFragment((await segments.segmentAt(offset!))!.bytes);
      expect(Math.abs(decodeTime / 48000 - frameSeconds)).toBeLessThan(timing);
    }
  }, 60_000);
});
