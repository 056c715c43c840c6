import { describe, expect, it } from 'vitest';
import { muxInit, patched, readSegmentIndex, segmentPatches, UnmuxableStream } from '../../../src/engine/streams/fmp4-mux';
import { box, children, concat, fullBox, readBoxHeader, u32, type Box } from '../../../src/engine/streams/mp4-boxes';

// Boxes built field by field as ISO/IEC 14496-12 lays them out (version 0), as ffmpeg writes them.
const zeros = (n: number) => new Uint8Array(n);
const mvhd = (timescale: number, nextTrackId: number) =>
  fullBox('mvhd', 0, 0, u32(0, 0, timescale, 0, 0x00010000), zeros(76), u32(nextTrackId));
const tkhd = (trackId: number, duration: number) => fullBox('tkhd', 0, 3, u32(0, 0, trackId, 0, duration), zeros(60));
const elst = (duration: number, mediaTime: number) => fullBox('elst', 0, 0, u32(1, duration, mediaTime, 0x00010000));
const trex = (trackId: number) => fullBox('trex', 0, 0, u32(trackId, 1, 0, 0, 0));
const mdia = (handler: string) => box('mdia', fullBox('hdlr', 0, 0, u32(0), new TextEncoder().encode(handler), zeros(13)));

function init(timescale: number, trackId: number, handler: string, duration = 0): Uint8Array {
  const trak = box('trak', tkhd(trackId, duration), box('edts', elst(duration, 0)), mdia(handler));
  return concat([
    box('ftyp', new TextEncoder().encode('iso5'), u32(512)),
    box('moov', mvhd(timescale, trackId + 1), trak, box('mvex', trex(trackId))),
  ]);
}

const u32At = (bytes: Uint8Array, at: number) => new DataView(bytes.buffer, bytes.byteOffset).getUint32(at);
const kids = (bytes: Uint8Array, parent: Box) => children(bytes, parent.data, parent.end);
const only = (boxes: Box[], type: string) => boxes.filter((b) => b.type === type);

function fragment(trackId: number, flags = 0x020000): Uint8Array {
  return box('moof', fullBox('mfhd', 0, 0, u32(1)), box('traf', fullBox('tfhd', 0, flags, u32(trackId)), fullBox('tfdt', 0, 0, u32(0))));
}

describe('joining a DASH stream: its initialization sections', () => {
  it('holds both tracks, the sound renumbered after the picture, its durations put in the movie timescale', () => {
    const { bytes, soundTrack } = muxInit(init(1000, 1, 'vide', 0), init(48000, 1, 'soun', 96000));
    expect(soundTrack).toEqual({ from: 1, to: 2 });
    const top = children(bytes, 0, bytes.length);
    expect(top.map((b) => b.type)).toEqual(['ftyp', 'moov']);
    const moov = kids(bytes, top[1]!);
    expect(moov.map((b) => b.type)).toEqual(['mvhd', 'trak', 'trak', 'mvex']);
    const mvhdBox = moov[0]!;
    expect(u32At(bytes, mvhdBox.end - 4)).toBe(3); // next_track_ID
    const [picture, sound] = only(moov, 'trak').map((trak) => kids(bytes, trak));
    expect(u32At(bytes, only(picture!, 'tkhd')[0]!.data + 12)).toBe(1);
    const soundTkhd = only(sound!, 'tkhd')[0]!;
    expect(u32At(bytes, soundTkhd.data + 12)).toBe(2);
    // 96000 ticks of 48 kHz are 2 s: 2000 of the movie's 1 kHz.
    expect(u32At(bytes, soundTkhd.data + 20)).toBe(2000);
    const soundElst = kids(bytes, only(sound!, 'edts')[0]!)[0]!;
    expect(u32At(bytes, soundElst.data + 8)).toBe(2000);
    const trexes = kids(bytes, moov[3]!);
    expect(trexes.map((t) => u32At(bytes, t.data + 4))).toEqual([1, 2]);
  });

  it('keeps track numbers that already differ', () => {
    expect(muxInit(init(1000, 1, 'vide'), init(1000, 7, 'soun')).soundTrack).toEqual({ from: 7, to: 7 });
  });

  it('refuses an initialization section that is not one fragmented track', () => {
    const notFragmented = concat([box('ftyp', u32(0)), box('moov', mvhd(1000, 2), box('trak', tkhd(1, 0)))]);
    expect(() => muxInit(notFragmented, init(1000, 1, 'soun'))).toThrow(UnmuxableStream);
  });
});

describe('joining a DASH stream: its segments', () => {
  // styp, sidx, then two fragments, each with a large mdat (never read).
  const sidx = fullBox('sidx', 0, 0, u32(1, 1000, 0, 0), new Uint8Array([0, 0, 0, 0]));
  const segment = concat([box('styp', u32(0)), sidx, fragment(1), box('mdat', zeros(50_000)), fragment(1), box('mdat', zeros(30_000))]);
  const reader = () => {
    const asked: [number, number][] = [];
    return { asked, read: async (at: number, length: number) => (asked.push([at, length]), segment.slice(at, at + length)) };
  };

  it('makes the sidx free and renumbers every fragment of the sound, reading box headers only', async () => {
    const { asked, read } = reader();
    const patches = await segmentPatches(segment.slice(0, 200), segment.length, read, { from: 1, to: 2 });
    const out = patched(segment, 0, patches);
    const top = children(out, 0, out.length);
    expect(top.map((b) => b.type)).toEqual(['styp', 'free', 'moof', 'mdat', 'moof', 'mdat']);
    for (const moof of only(top, 'moof')) {
      const tfhd = kids(out, kids(out, moof)[1]!)[0]!;
      expect(u32At(out, tfhd.data + 4)).toBe(2);
    }
    expect(out.length).toBe(segment.length);
    // One more read, at the second fragment: no media data was asked for.
    expect(asked).toHaveLength(1);
    expect(asked[0]![0]).toBe(top[4]!.start);
  });

  it("leaves the picture's track number, and refuses a fragment with absolute data offsets", async () => {
    const { read } = reader();
    const patches = await segmentPatches(segment, segment.length, read);
    expect(patches).toEqual([{ at: 12 + 4, hex: '66726565' }]); // the sidx's type, after a 12-byte styp
    const absolute = concat([fragment(1, 0x000001), box('mdat', zeros(10))]);
    await expect(segmentPatches(absolute, absolute.length, read, { from: 1, to: 2 })).rejects.toThrow(UnmuxableStream);
  });

  it('writes a patch that falls across two chunks into both, copying only chunks it touches', () => {
    const bytes = new Uint8Array(10);
    const patches = [{ at: 3, hex: 'aabbcc' }];
    const first = bytes.subarray(0, 4);
    const second = bytes.subarray(4, 10);
    expect([...patched(first, 0, patches)]).toEqual([0, 0, 0, 0xaa]);
    expect([...patched(second, 4, patches)]).toEqual([0xbb, 0xcc, 0, 0, 0, 0]);
    const untouched = bytes.subarray(6, 10);
    expect(patched(untouched, 6, patches)).toBe(untouched);
    expect([...bytes]).toEqual(new Array(10).fill(0));
  });
});

describe('a segment index (SegmentBase)', () => {
  it('gives each subsegment its size and duration, counted from the end of the index', () => {
    const refs = u32(100_000, 90_000 * 2, 0x90000000, 50_000, 90_000, 0x90000000);
    const index = fullBox('sidx', 0, 0, u32(1, 90_000, 0, 16), new Uint8Array([0, 0, 0, 2]), refs);
    expect(readSegmentIndex(index)).toEqual({
      firstOffset: 16,
      boxSize: readBoxHeader(index, 0)!.end,
      references: [
        { size: 100_000, seconds: 2 },
        { size: 50_000, seconds: 1 },
      ],
    });
  });

  it('refuses an index of indexes', () => {
    const index = fullBox('sidx', 0, 0, u32(1, 90_000, 0, 0), new Uint8Array([0, 0, 0, 1]), u32(0x80000000 | 500, 90_000, 0));
    expect(() => readSegmentIndex(index)).toThrow(UnmuxableStream);
  });
});
