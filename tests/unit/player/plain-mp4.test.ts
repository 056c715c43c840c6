import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clip, MP4_SHORT } from '../../support/clips';
import { fixture, reader } from './stored-fixture';
import { children, readBoxHeader, type Box } from '../../../src/engine/streams/mp4-boxes';
import { openPlainMp4, type PlainMp4Source } from '../../../src/player/mse/plain-mp4';
import { FRAGMENT_SAMPLES } from '../../../src/player/mse/segments';
import { Unsupported } from '../../../src/player/mse/segments';

interface Fragment {
  trackId: number;
  samples: number;
  /** Its first sample is a keyframe (trun's first-sample flags or tfhd's defaults). */
  startsWithKeyframe: boolean;
  /** tfdt, in the track's timescale. */
  decodeTime: number;
}

/** The fragments (moof: one traf each, as mp4box writes them) in appended bytes. */
function fragments(bytes: Uint8Array): Fragment[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const child = (parent: Box, type: string) => children(bytes, parent.data, parent.end).find((b) => b.type === type)!;
  const out: Fragment[] = [];
  for (const box of children(bytes, 0, bytes.length)) {
    if (box.type !== 'moof') continue;
    for (const traf of children(bytes, box.data, box.end).filter((b) => b.type === 'traf')) {
      const tfhd = child(traf, 'tfhd');
      const tfdt = child(traf, 'tfdt');
      const trun = child(traf, 'trun');
      const decodeTime = bytes[tfdt.data] === 1 ? Number(view.getBigUint64(tfdt.data + 4)) : view.getUint32(tfdt.data + 4);
      out.push({
        trackId: view.getUint32(tfhd.data + 4),
        samples: view.getUint32(trun.data + 4),
        decodeTime,
        startsWithKeyframe: (firstSampleFlags(view, trun) & SAMPLE_IS_NON_SYNC) === 0,
      });
    }
  }
  return out;
}

/** ISO BMFF sample flags: sample_is_non_sync_sample. */
const SAMPLE_IS_NON_SYNC = 0x10000;

/** The flags of a trun's first sample: first_sample_flags when present, else the first entry's own flags. */
function firstSampleFlags(view: DataView, trun: Box): number {
  const flags = view.getUint32(trun.data) & 0xffffff;
  let at = trun.data + 8;
  if (flags & 0x1) at += 4; // data_offset
  if (flags & 0x4) return view.getUint32(at); // first_sample_flags
  at += (flags & 0x100 ? 4 : 0) + (flags & 0x200 ? 4 : 0); // the first entry's duration and size
  return flags & 0x400 ? view.getUint32(at) : 0;
}

/** The track id → timescale of an init segment (ftyp + moov). */
function timescales(init: Uint8Array): Map<number, number> {
  const view = new DataView(init.buffer, init.byteOffset, init.byteLength);
  const moov = children(init, 0, init.length).find((b) => b.type === 'moov')!;
  const map = new Map<number, number>();
  for (const trak of children(init, moov.data, moov.end).filter((b) => b.type === 'trak')) {
    const tkhd = children(init, trak.data, trak.end).find((b) => b.type === 'tkhd')!;
    const mdia = children(init, trak.data, trak.end).find((b) => b.type === 'mdia')!;
    const mdhd = children(init, mdia.data, mdia.end).find((b) => b.type === 'mdhd')!;
    const v1 = init[tkhd.data] === 1;
    map.set(view.getUint32(tkhd.data + (v1 ? 20 : 12)), view.getUint32(mdhd.data + (init[mdhd.data] === 1 ? 20 : 12)));
  }
  return map;
}

async function feedAll(source: PlainMp4Source, from = source.firstSegment): Promise<Fragment[]> {
  const out: Fragment[] = [];
  for (let offset = from; ;) {
    const segment = await source.segmentAt(offset);
    if (!segment) return out;
    expect(segment.bytes.length).toBeGreaterThan(0);
    out.push(...fragments(segment.bytes));
    expect(segment.next).toBeGreaterThanOrEqual(offset);
    offset = segment.next;
  }
}

describe.each(['plain-faststart.mp4', 'plain-moov-end.mp4'])('plain MP4 remux (%s)', (name) => {
  it('makes an init segment for both tracks and fragments holding every sample of each', async () => {
    const bytes = fixture(name);
    const source = await openPlainMp4(reader(bytes), 32 * 1024);
    expect(source.mime).toMatch(/^video\/mp4; codecs="vp09\.[0-9.]+,opus"$/);
    expect(source.durationSeconds).toBeCloseTo(4, 0);
    expect(String.fromCharCode(...source.init.subarray(4, 8))).toBe('ftyp');
    const scales = timescales(source.init);
    expect(scales.size).toBe(2);
    // ffprobe: 100 VP9 frames, 201 Opus packets.
    expect([...source.sampleCounts.values()].sort((a, b) => a - b)).toEqual([100, 201]);

    const all = await feedAll(source);
    for (const [trackId, count] of source.sampleCounts) {
      const mine = all.filter((f) => f.trackId === trackId);
      expect(mine.length).toBeGreaterThan(1);
      expect(Math.max(...mine.map((f) => f.samples))).toBeLessThanOrEqual(FRAGMENT_SAMPLES);
      expect(mine.reduce((n, f) => n + f.samples, 0)).toBe(count);
      // In order, without gaps in decode time.
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.decodeTime).toBeGreaterThan(mine[i - 1]!.decodeTime);
    }
    expect(all.length).toBeGreaterThan(0);
    expect(readBoxHeader(bytes, 0)?.type).toBe('ftyp');
  });

  it('seeks: fragments after a seek start at or before the target, on every track', async () => {
    const source = await openPlainMp4(reader(fixture(name)), 32 * 1024);
    const scales = timescales(source.init);
    await source.segmentAt(source.firstSegment); // play a little first
    for (const target of [2.5, 1.2, 3.9]) {
      const offset = await source.offsetFor(target);
      expect(offset).toBeDefined();
      const after = await feedAll(source, offset);
      for (const trackId of source.sampleCounts.keys()) {
        const first = after.find((f) => f.trackId === trackId);
        expect(first, `track ${trackId} after a seek to ${target}`).toBeDefined();
        const seconds = first!.decodeTime / scales.get(trackId)!;
        expect(seconds).toBeLessThanOrEqual(target);
        expect(seconds).toBeGreaterThan(target - 1.1); // a keyframe every second
      }
    }
  });
});

describe('plain MP4 as ffmpeg makes it (x264: a keyframe every 6–10 s)', () => {
  it('cuts fragments of FRAGMENT_SAMPLES samples, not at keyframes, and starts again from a keyframe after a seek (issue 26)', async () => {
    const media = await clip(MP4_SHORT);
    const source = await openPlainMp4(reader(new Uint8Array(readFileSync(media.path))));
    const scales = timescales(source.init);
    const all = await feedAll(source);
    // Aligned on keyframes, the first video fragment would hold about 150 frames: 6 s of media to
    // download before the first frame, and as long after every seek.
    const video = all.filter((f) => f.trackId === 1);
    expect(video[0]!.startsWithKeyframe).toBe(true);
    // (The last feed flushes what is left in fragments of one sample each.)
    const full = Math.floor(source.sampleCounts.get(1)! / FRAGMENT_SAMPLES) - 1;
    expect(video.slice(0, full).map((f) => f.samples)).toEqual(Array(full).fill(FRAGMENT_SAMPLES));
    expect(video.some((f) => !f.startsWithKeyframe)).toBe(true);
    for (const target of [13.3, 4.2]) {
      const after = await feedAll(source, await source.offsetFor(target));
      for (const trackId of source.sampleCounts.keys()) {
        const first = after.find((f) => f.trackId === trackId)!;
        expect(first.startsWithKeyframe, `track ${trackId} after a seek to ${target} s`).toBe(true);
        expect(first.decodeTime / scales.get(trackId)!).toBeLessThanOrEqual(target);
      }
    }
  }, 60_000);
});

describe('plain MP4 with the moov at the end', () => {
  it('reads the moov before the media (one jump past the mdat), not the file in order', async () => {
    const bytes = fixture('plain-moov-end.mp4');
    const stored = reader(bytes);
    await openPlainMp4(stored);
    const mdat = children(bytes, 0, bytes.length).find((b) => b.type === 'mdat')!;
    // The first read holds the head; then the moov's header, then the whole moov in one read.
    expect(stored.reads[0]![0]).toBe(0);
    expect(stored.reads.slice(1)).toEqual([
      [mdat.end, mdat.end + 16],
      [mdat.end, bytes.length],
    ]);
    expect(stored.reads.reduce((n, [s, e]) => n + Math.min(e, bytes.length) - s, 0)).toBeLessThan(bytes.length);
  });

  it('refuses a fragmented MP4 (the fragmented path plays it as it is)', async () => {
    await expect(openPlainMp4(reader(fixture('fragmented.mp4')))).rejects.toBeInstanceOf(Unsupported);
  });
});
