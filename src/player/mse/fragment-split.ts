import { box, children, concat, fullBox, u32, u64 } from '../../engine/streams/mp4-boxes';

/**
 * Splits a fragment of a fragmented MP4 into smaller ones for Media Source. ffmpeg cuts a
 * fragment per keyframe (x264: every 6–10 s, 1.3 MB at 1 Mbit/s) and writes each track's samples
 * as one run: the video's seconds first, then the audio's. Appended whole, nothing plays until
 * the whole fragment is stored; a browser's own player instead reads the audio run at the end of
 * the mdat early. Here the other tracks' runs are read first (small), then the lead track (the
 * video) in chunks of about half a second, each written as its own moof + mdat with the other tracks'
 * samples of the same time, so playback starts after the first chunk.
 */

/** A sample's fields, resolved from trun, tfhd and trex. */
export interface Sample {
  /** Absolute offset of its bytes in the file. */
  offset: number;
  size: number;
  duration: number;
  flags: number;
  compositionOffset: number;
}

export interface TrackRun {
  trackId: number;
  /** tfdt: the decode time of its first sample, in the track's timescale. */
  decodeTime: number;
  samples: Sample[];
}

/** trex: what a fragment's samples are when neither trun nor tfhd says. */
export interface TrackDefaults {
  duration: number;
  size: number;
  flags: number;
}

/** The samples of each traf of the moof in `bytes` (the moof alone, found at absolute `moofStart`). */
export function moofSamples(bytes: Uint8Array, moofStart: number, defaults: ReadonlyMap<number, TrackDefaults>): TrackRun[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const moof = children(bytes, 0, bytes.length)[0]!;
  const runs: TrackRun[] = [];
  // Without a base offset or default-base-is-moof, a traf's data follows the previous traf's (ISO 14496-12 8.8.7).
  let previousEnd = moofStart;
  for (const traf of children(bytes, moof.data, moof.end).filter((b) => b.type === 'traf')) {
    const boxes = children(bytes, traf.data, traf.end);
    const tfhd = boxes.find((b) => b.type === 'tfhd');
    if (!tfhd) continue;
    const tfhdFlags = view.getUint32(tfhd.data) & 0xffffff;
    const trackId = view.getUint32(tfhd.data + 4);
    const trex = defaults.get(trackId) ?? { duration: 0, size: 0, flags: 0 };
    let p = tfhd.data + 8;
    let base = tfhdFlags & 0x20000 ? moofStart : previousEnd;
    if (tfhdFlags & 0x1) {
      base = Number(view.getBigUint64(p));
      p += 8;
    }
    if (tfhdFlags & 0x2) p += 4; // sample description index
    const field = (flag: number, fallback: number) => {
      if (!(tfhdFlags & flag)) return fallback;
      p += 4;
      return view.getUint32(p - 4);
    };
    const duration = field(0x8, trex.duration);
    const size = field(0x10, trex.size);
    const flags = field(0x20, trex.flags);
    const tfdt = boxes.find((b) => b.type === 'tfdt');
    const decodeTime = !tfdt ? 0 : bytes[tfdt.data] === 1 ? Number(view.getBigUint64(tfdt.data + 4)) : view.getUint32(tfdt.data + 4);
    const samples: Sample[] = [];
    let next = base;
    for (const trun of boxes.filter((b) => b.type === 'trun')) {
      const version = bytes[trun.data]!;
      const trunFlags = view.getUint32(trun.data) & 0xffffff;
      const count = view.getUint32(trun.data + 4);
      let q = trun.data + 8;
      if (trunFlags & 0x1) {
        next = base + view.getInt32(q);
        q += 4;
      }
      let firstFlags: number | undefined;
      if (trunFlags & 0x4) {
        firstFlags = view.getUint32(q);
        q += 4;
      }
      const entry = (flag: number, fallback: number, signed = false) => {
        if (!(trunFlags & flag)) return fallback;
        q += 4;
        return signed ? view.getInt32(q - 4) : view.getUint32(q - 4);
      };
      for (let i = 0; i < count; i++) {
        const sample: Sample = {
          offset: next,
          duration: entry(0x100, duration),
          size: entry(0x200, size),
          flags: entry(0x400, flags),
          compositionOffset: entry(0x800, 0, version === 1),
        };
        if (i === 0 && firstFlags !== undefined) sample.flags = firstFlags;
        samples.push(sample);
        next += sample.size;
      }
    }
    previousEnd = next;
    runs.push({ trackId, decodeTime, samples });
  }
  return runs;
}

/** Part of a fragment: each track's samples of one stretch of time. */
export type Chunk = TrackRun[];

/**
 * Cuts a fragment's runs into chunks of `leadSamples` samples of the lead track, each with the
 * other tracks' samples that start before the lead's next chunk (times compared in seconds,
 * through each track's timescale).
 */
export function splitRuns(
  runs: readonly TrackRun[],
  leadTrackId: number,
  leadSamples: number,
  timescales: ReadonlyMap<number, number>,
): Chunk[] {
  const lead = runs.find((r) => r.trackId === leadTrackId);
  if (!lead || lead.samples.length <= leadSamples) return [runs.filter((r) => r.samples.length > 0)];
  const seconds = (trackId: number, time: number) => time / (timescales.get(trackId) ?? 1);
  // Where each chunk ends, in seconds: the decode time of the lead's next chunk.
  const ends: number[] = [];
  let time = lead.decodeTime;
  lead.samples.forEach((s, i) => {
    if (i > 0 && i % leadSamples === 0) ends.push(seconds(lead.trackId, time));
    time += s.duration;
  });
  ends.push(Infinity);
  const chunks: Chunk[] = ends.map(() => []);
  for (const run of runs) {
    let at = run.decodeTime;
    let chunk = 0;
    for (const sample of run.samples) {
      while (seconds(run.trackId, at) >= ends[chunk]! - 1e-9) chunk++;
      let part = chunks[chunk]!.find((r) => r.trackId === run.trackId);
      if (!part) chunks[chunk]!.push((part = { trackId: run.trackId, decodeTime: at, samples: [] }));
      part.samples.push(sample);
      at += sample.duration;
    }
  }
  return chunks.filter((c) => c.length > 0);
}

/** The absolute byte range holding a run's samples (the samples may leave gaps: other tracks' data). */
export function runRange(run: TrackRun): { start: number; end: number } {
  return { start: Math.min(...run.samples.map((s) => s.offset)), end: Math.max(...run.samples.map((s) => s.offset + s.size)) };
}

/** moof + mdat of a chunk; `bytesOf` gives a sample's bytes. */
export function writeChunk(chunk: Chunk, sequence: number, bytesOf: (sample: Sample) => Uint8Array): Uint8Array {
  const mfhd = fullBox('mfhd', 0, 0, u32(sequence));
  // trun: the data offset (from the moof's first byte), then each sample's duration, size, flags and
  // (signed, version 1) composition offset. Written twice: the offsets need the moof's length.
  const trafs = (dataStart: number) => {
    let dataAt = dataStart;
    return chunk.map((run) => {
      const fields = run.samples.flatMap((s) => [s.duration, s.size, s.flags, s.compositionOffset]);
      const trun = fullBox('trun', 1, 0xf01, u32(run.samples.length, dataAt, ...fields));
      dataAt += run.samples.reduce((n, s) => n + s.size, 0);
      return box('traf', fullBox('tfhd', 0, 0x20000, u32(run.trackId)), fullBox('tfdt', 1, 0, u64(run.decodeTime)), trun);
    });
  };
  const moofLength = box('moof', mfhd, ...trafs(0)).length;
  return concat([box('moof', mfhd, ...trafs(moofLength + 8)), box('mdat', ...chunk.flatMap((run) => run.samples.map(bytesOf)))]);
}
