import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { moofSamples, type TrackRun } from '../../../src/player/mse/fragment-split';
import { children } from '../../../src/engine/streams/mp4-boxes';
import { openFragmentedMp4, parseMoov } from '../../../src/player/mse/mp4';
import { clip, FRAGMENTED_MP4_SHORT } from '../../support/clips';
import { reader } from './stored-fixture';

/** ISO BMFF sample flags: sample_is_non_sync_sample. */
const NON_SYNC = 0x10000;

/** Each track's samples in a file or an appended segment: decode time and bytes, in order. */
function samplesByTrack(
  bytes: Uint8Array,
  movie: ReturnType<typeof parseMoov>,
): Map<number, { time: number; bytes: Uint8Array; sync: boolean }[]> {
  const out = new Map<number, { time: number; bytes: Uint8Array; sync: boolean }[]>();
  for (const moof of children(bytes, 0, bytes.length).filter((b) => b.type === 'moof'))
    for (const run of moofSamples(bytes.subarray(moof.start, moof.end), moof.start, movie.trackDefaults)) {
      const list = out.get(run.trackId) ?? [];
      let time = run.decodeTime;
      for (const s of run.samples) {
        list.push({ time, bytes: bytes.subarray(s.offset, s.offset + s.size), sync: (s.flags & NON_SYNC) === 0 });
        time += s.duration;
      }
      out.set(run.trackId, list);
    }
  return out;
}

/** The runs of each moof of an appended segment. */
function segmentRuns(bytes: Uint8Array, movie: ReturnType<typeof parseMoov>): TrackRun[] {
  const moof = children(bytes, 0, bytes.length).find((b) => b.type === 'moof')!;
  return moofSamples(bytes.subarray(moof.start, moof.end), 0, movie.trackDefaults);
}

describe('a fragmented MP4 as ffmpeg makes it (a fragment per keyframe, the video run then the audio run)', async () => {
  const media = await clip(FRAGMENTED_MP4_SHORT);
  const file = new Uint8Array(readFileSync(media.path));
  const moov = children(file, 0, file.length).find((b) => b.type === 'moov')!;
  const movie = parseMoov(file.subarray(moov.start, moov.end));
  const video = movie.videoTrackId!;

  it('is appended in chunks of at most 50 video frames that carry every sample of every track once, at its time', async () => {
    const source = samplesByTrack(file, movie);
    // The source's fragments hold 6–10 s of video: 150–250 frames at 25 fps.
    const sourceRuns = children(file, 0, file.length)
      .filter((b) => b.type === 'moof')
      .map((m) => moofSamples(file.subarray(m.start, m.end), m.start, movie.trackDefaults));
    expect(Math.max(...sourceRuns.map((runs) => runs.find((r) => r.trackId === video)!.samples.length))).toBeGreaterThan(100);

    const mp4 = await openFragmentedMp4(reader(file));
    const appended: Uint8Array[] = [];
    for (let offset = mp4.firstSegment, s = await mp4.segmentAt(offset); s; offset = s.next, s = await mp4.segmentAt(offset)) {
      appended.push(s.bytes);
      const runs = segmentRuns(s.bytes, movie);
      expect(runs.find((r) => r.trackId === video)!.samples.length).toBeLessThanOrEqual(50);
    }
    const remuxed = new Map<number, { time: number; bytes: Uint8Array; sync: boolean }[]>();
    for (const bytes of appended)
      for (const [track, list] of samplesByTrack(bytes, movie)) remuxed.set(track, [...(remuxed.get(track) ?? []), ...list]);
    expect([...remuxed.keys()].sort()).toEqual([...source.keys()].sort());
    for (const [track, list] of source) {
      const mine = remuxed.get(track)!;
      expect(mine.map((s) => s.time)).toEqual(list.map((s) => s.time));
      expect(mine.map((s) => s.sync)).toEqual(list.map((s) => s.sync));
      expect(Buffer.concat(mine.map((s) => s.bytes)).equals(Buffer.concat(list.map((s) => s.bytes)))).toBe(true);
    }
  }, 60_000);

  it('reads a fragment’s audio run before its video, and starts again from a keyframe after a seek', async () => {
    const stored = reader(file);
    const mp4 = await openFragmentedMp4(stored);
    // The second seek lands in the fragment the first one played from: it is opened again.
    for (const seconds of [13.3, 2.5, 3.5]) {
      const offset = (await mp4.offsetFor(seconds))!;
      stored.reads.length = 0;
      const first = (await mp4.segmentAt(offset))!;
      const runs = segmentRuns(first.bytes, movie);
      const lead = runs.find((r) => r.trackId === video)!;
      expect((lead.samples[0]!.flags & NON_SYNC) === 0, `a keyframe first after a seek to ${seconds} s`).toBe(true);
      expect(lead.decodeTime / movie.timescales.get(video)!).toBeLessThanOrEqual(seconds);
      // The reads after the moof: the audio run (at the mdat's end), then the first video chunk (at its start).
      const [audioRead, videoRead] = stored.reads.slice(-2);
      expect(audioRead![0]).toBeGreaterThan(videoRead![0]);
      // The chunks after it follow, each a moof + mdat with video frames later than the last.
      let time = lead.decodeTime;
      for (let next = first.next, i = 0; i < 3; i++) {
        const segment = (await mp4.segmentAt(next))!;
        const chunkLead = segmentRuns(segment.bytes, movie).find((r) => r.trackId === video)!;
        expect(chunkLead.decodeTime).toBeGreaterThan(time);
        time = chunkLead.decodeTime;
        next = segment.next;
      }
    }
  }, 60_000);
});
