import { moofSamples, runRange, splitRuns, writeChunk, type Chunk, type Sample, type TrackDefaults } from './fragment-split';
import { FRAGMENT_SAMPLES, Unsupported, type MediaSegments, type StoredReader } from './segments';
import { children, readBoxHeader, type Box } from '../../engine/streams/mp4-boxes';

/**
 * ISO BMFF (MP4) for MSE. Fragmented MP4 (a moov with mvex, then moof + mdat pairs): ftyp +
 * moov is the init segment, then each fragment is appended in chunks of a few seconds
 * (fragment-split.ts), so a 10 s fragment plays before all of it is stored. The mfra index at the end (found through mfro, the last 16 bytes) gives
 * the fragment to start from for a seek. A plain MP4 (samples indexed in the moov) is reported
 * as NotFragmented: plain-mp4.ts remuxes it into fragments with mp4box.
 */

/** A plain (non-fragmented) MP4: the route remuxes it (plain-mp4.ts). */
export class NotFragmented extends Unsupported {}

function child(bytes: Uint8Array, parent: Box, type: string, base: number, skip = 0): Box | undefined {
  return children(bytes, parent.data + skip, parent.end, base).find((b) => b.type === type);
}

export interface Mp4Movie {
  fragmented: boolean;
  /** The codecs parameter; undefined entries are codecs this parser cannot name. */
  codecs: (string | undefined)[];
  hasVideo: boolean;
  durationSeconds?: number;
  /** Track id → timescale (for tfra times). */
  timescales: Map<number, number>;
  /** Track id → trex defaults (fragmented files). */
  trackDefaults: Map<number, TrackDefaults>;
  /** The first video track's id (else undefined): fragments are split along it. */
  videoTrackId?: number;
}

/** Reads what the player needs from a moov box (`bytes` holds exactly the moov). */
export function parseMoov(bytes: Uint8Array): Mp4Movie {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const moov = readBoxHeader(bytes, 0)!;
  const movie: Mp4Movie = { fragmented: false, codecs: [], hasVideo: false, timescales: new Map(), trackDefaults: new Map() };
  let movieTimescale = 0;
  for (const box of children(bytes, moov.data, moov.end)) {
    if (box.type === 'mvhd') {
      const v1 = bytes[box.data] === 1;
      movieTimescale = view.getUint32(box.data + (v1 ? 20 : 12));
      const duration = v1 ? Number(view.getBigUint64(box.data + 24)) : view.getUint32(box.data + 16);
      if (duration > 0 && movieTimescale > 0) movie.durationSeconds = duration / movieTimescale;
    } else if (box.type === 'mvex') {
      movie.fragmented = true;
      for (const trex of children(bytes, box.data, box.end).filter((b) => b.type === 'trex')) {
        const [trackId, , duration, size, flags] = [4, 8, 12, 16, 20].map((at) => view.getUint32(trex.data + at));
        movie.trackDefaults.set(trackId!, { duration: duration!, size: size!, flags: flags! });
      }
      const mehd = child(bytes, box, 'mehd', 0);
      if (mehd && movieTimescale > 0) {
        const v1 = bytes[mehd.data] === 1;
        const duration = v1 ? Number(view.getBigUint64(mehd.data + 4)) : view.getUint32(mehd.data + 4);
        if (duration > 0) movie.durationSeconds = duration / movieTimescale;
      }
    } else if (box.type === 'trak') {
      parseTrak(bytes, view, box, movie);
    }
  }
  return movie;
}

function parseTrak(bytes: Uint8Array, view: DataView, trak: Box, movie: Mp4Movie): void {
  const tkhd = child(bytes, trak, 'tkhd', 0);
  const mdia = child(bytes, trak, 'mdia', 0);
  if (!tkhd || !mdia) return;
  const trackId = view.getUint32(tkhd.data + (bytes[tkhd.data] === 1 ? 20 : 12));
  const mdhd = child(bytes, mdia, 'mdhd', 0);
  if (mdhd) movie.timescales.set(trackId, view.getUint32(mdhd.data + (bytes[mdhd.data] === 1 ? 20 : 12)));
  const hdlr = child(bytes, mdia, 'hdlr', 0);
  const handler = hdlr ? String.fromCharCode(...bytes.subarray(hdlr.data + 8, hdlr.data + 12)) : '';
  if (handler !== 'vide' && handler !== 'soun') return;
  if (handler === 'vide') {
    movie.hasVideo = true;
    movie.videoTrackId ??= trackId;
  }
  const minf = child(bytes, mdia, 'minf', 0);
  const stbl = minf && child(bytes, minf, 'stbl', 0);
  const stsd = stbl && child(bytes, stbl, 'stsd', 0);
  // stsd: version/flags (4) and an entry count (4), then sample entries.
  const entry = stsd && children(bytes, stsd.data + 8, stsd.end)[0];
  movie.codecs.push(entry && sampleEntryCodec(bytes, entry));
}

/** The RFC 6381 codec name of a sample entry, for the codecs this player knows. */
function sampleEntryCodec(bytes: Uint8Array, entry: Box): string | undefined {
  const hex = (n: number) => n.toString(16).padStart(2, '0');
  // Visual sample entries have 78 bytes before their child boxes, audio ones 28.
  if (entry.type === 'avc1' || entry.type === 'avc3') {
    const avcC = children(bytes, entry.data + 78, entry.end).find((b) => b.type === 'avcC');
    return avcC && `${entry.type}.${hex(bytes[avcC.data + 1]!)}${hex(bytes[avcC.data + 2]!)}${hex(bytes[avcC.data + 3]!)}`;
  }
  if (entry.type === 'vp09') return 'vp09.00.10.08';
  if (entry.type === 'Opus') return 'opus';
  if (entry.type === 'fLaC') return 'flac';
  if (entry.type === 'mp4a') {
    const esds = children(bytes, entry.data + 28, entry.end).find((b) => b.type === 'esds');
    return esds ? `mp4a.${mp4aProfile(bytes, esds.data + 4, esds.end)}` : 'mp4a.40.2';
  }
  return undefined;
}

/** `40.2` from an ES descriptor: objectTypeIndication, then the AAC audio object type. */
function mp4aProfile(bytes: Uint8Array, start: number, end: number): string {
  let objectType = 0x40;
  let audioObjectType = 2;
  // Descriptors: tag, a 1–4 byte size (7 bits each), payload. ES_Descriptor (3) holds
  // DecoderConfigDescriptor (4), which holds DecoderSpecificInfo (5).
  const walk = (pos: number, stop: number): void => {
    while (pos + 2 <= stop) {
      const tag = bytes[pos]!;
      let size = 0;
      let i = pos + 1;
      for (let n = 0; n < 4 && i < stop; n++) {
        const b = bytes[i++]!;
        size = (size << 7) | (b & 0x7f);
        if (!(b & 0x80)) break;
      }
      const payload = i;
      if (tag === 3)
        walk(payload + 3, payload + size); // ES_ID (2) + flags (1), assuming no optional fields
      else if (tag === 4) {
        objectType = bytes[payload]!;
        walk(payload + 13, payload + size);
      } else if (tag === 5) audioObjectType = bytes[payload]! >> 3;
      pos = payload + size;
    }
  };
  walk(start, end);
  return objectType === 0x40 ? `40.${audioObjectType}` : hexByte(objectType);
}

function hexByte(n: number): string {
  return n.toString(16).padStart(2, '0');
}

/** tfra entries: per track, media time (seconds) → absolute offset of the moof. */
export function parseMfra(
  bytes: Uint8Array,
  base: number,
  timescales: Map<number, number>,
): Map<number, { seconds: number; offset: number }[]> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const mfra = readBoxHeader(bytes, 0, base)!;
  const tracks = new Map<number, { seconds: number; offset: number }[]>();
  for (const tfra of children(bytes, mfra.data, mfra.end, base).filter((b) => b.type === 'tfra')) {
    let p = tfra.data - base;
    const v1 = bytes[p] === 1;
    const trackId = view.getUint32(p + 4);
    const lengths = view.getUint32(p + 8);
    const count = view.getUint32(p + 12);
    p += 16;
    const trafBytes = ((lengths >> 4) & 3) + 1;
    const trunBytes = ((lengths >> 2) & 3) + 1;
    const sampleBytes = (lengths & 3) + 1;
    const scale = timescales.get(trackId) ?? 1;
    const entries: { seconds: number; offset: number }[] = [];
    for (let i = 0; i < count; i++) {
      const time = v1 ? Number(view.getBigUint64(p)) : view.getUint32(p);
      const offset = v1 ? Number(view.getBigUint64(p + 8)) : view.getUint32(p + 4);
      p += (v1 ? 16 : 8) + trafBytes + trunBytes + sampleBytes;
      entries.push({ seconds: time / scale, offset });
    }
    tracks.set(trackId, entries);
  }
  return tracks;
}

const HEADER_BYTES = 16;

/** A moof + mdat of the file, cut into chunks (fragment-split.ts). */
interface SourceFragment {
  chunks: Chunk[];
  lead: number;
  runs: ReturnType<typeof moofSamples>;
  /** Where the fragment's data ends: the next source fragment starts there. */
  end: number;
  /** Each chunk's offset as segmentAt knows it (the first: the moof's). */
  starts: number[];
  /** The other tracks' runs, read once per fragment. */
  others?: Promise<{ start: number; end: number; bytes: Uint8Array }[]>;
}

/** The first byte of a chunk's lead-track samples. */
function leadStart(chunk: Chunk, lead: number): number {
  const run = chunk.find((r) => r.trackId === lead) ?? chunk[0]!;
  return runRange(run).start;
}

/** Fragmented MP4 for MSE; NotFragmented for a plain one. */
export async function openFragmentedMp4(reader: StoredReader): Promise<MediaSegments> {
  // Top-level boxes up to the moov (ftyp, maybe free/uuid).
  let moov: Box | undefined;
  let pos = 0;
  while (!moov) {
    if (pos >= reader.size) throw new Unsupported('layout', 'no moov box found in this MP4 file');
    const box = readBoxHeader(await reader.read(pos, pos + HEADER_BYTES), 0, pos, reader.size);
    if (!box) throw new Unsupported('unreadable', 'this MP4 file ends inside a box header');
    if (box.type === 'moov') moov = box;
    else if (box.type === 'mdat') throw new NotFragmented('layout', 'this MP4 file has its index (moov) after the media');
    else if (box.type === 'moof') throw new Unsupported('layout', 'this MP4 file has fragments before its moov');
    pos = box.end;
  }
  const movie = parseMoov(await reader.read(moov.start, moov.end));
  if (!movie.fragmented) throw new NotFragmented('layout', 'this MP4 file is not fragmented (Media Source playback needs fragments)');
  if (movie.codecs.length === 0 || movie.codecs.some((c) => c === undefined))
    throw new Unsupported('unreadable', 'this MP4 file uses a codec the player cannot name');
  const mime = `${movie.hasVideo ? 'video' : 'audio'}/mp4; codecs="${movie.codecs.join(',')}"`;
  const init = await reader.read(0, moov.end);
  let index: Promise<{ seconds: number; offset: number }[][]> | undefined;
  const loadIndex = () =>
    (index ??= (async () => {
      if (reader.size < 16) return [];
      const mfro = await reader.read(reader.size - 16, reader.size);
      if (String.fromCharCode(...mfro.subarray(4, 8)) !== 'mfro') return [];
      const length = new DataView(mfro.buffer, mfro.byteOffset).getUint32(12);
      const start = reader.size - length;
      if (length < 16 || start < moov.end) return [];
      const bytes = await reader.read(start, reader.size);
      if (String.fromCharCode(...bytes.subarray(4, 8)) !== 'mfra') return [];
      return [...parseMfra(bytes, start, movie.timescales).values()];
    })());
  let durationSeconds = movie.durationSeconds;
  if (durationSeconds === undefined) {
    // empty_moov files have no duration; without one, seeks are clamped. The index tells where
    // the last fragment starts; adding the longest fragment gives at most one fragment too much,
    // which endOfStream() trims to what was appended.
    const tracks = await loadIndex();
    const ends = tracks.map((entries) => {
      const last = entries[entries.length - 1]?.seconds ?? 0;
      const longest = Math.max(0, ...entries.slice(1).map((e, i) => e.seconds - entries[i]!.seconds));
      return last + longest;
    });
    const end = Math.max(0, ...ends);
    if (end > 0) durationSeconds = end;
  }

  /** Where each chunk but a fragment's first starts (its lead samples' first byte): the offsets segmentAt hands out. */
  const chunkAt = new Map<number, { fragment: SourceFragment; index: number }>();
  let current: SourceFragment | undefined;
  let sequence = 0;

  const openFragment = async (moof: Box): Promise<SourceFragment> => {
    const runs = moofSamples(await reader.read(moof.start, moof.end), moof.start, movie.trackDefaults);
    const mdat = readBoxHeader(await reader.read(moof.end, moof.end + HEADER_BYTES), 0, moof.end, reader.size);
    const end = Math.max(mdat?.type === 'mdat' ? mdat.end : moof.end, ...runs.map((r) => (r.samples.length ? runRange(r).end : 0)));
    const lead = movie.videoTrackId ?? runs[0]?.trackId ?? 0;
    const chunks = splitRuns(runs, lead, FRAGMENT_SAMPLES, movie.timescales);
    // Only the fragment being played keeps its other tracks' bytes and its chunks' offsets (a seek
    // back into it opens it again, with the same offsets).
    if (current) for (const start of current.starts) chunkAt.delete(start);
    const starts = chunks.map((chunk, i) => (i === 0 ? moof.start : leadStart(chunk, lead)));
    const fragment: SourceFragment = { chunks, lead, runs, end, starts };
    for (let index = 1; index < starts.length; index++) chunkAt.set(starts[index]!, { fragment, index });
    current = fragment;
    return fragment;
  };

  /** Chunk `index` of `fragment` as moof + mdat, the other tracks' runs read first (the video's bytes are most of it). */
  const emit = async (fragment: SourceFragment, index: number) => {
    fragment.others ??= Promise.all(
      fragment.runs
        .filter((r) => r.trackId !== fragment.lead && r.samples.length > 0)
        .map(async (r) => {
          const range = runRange(r);
          return { ...range, bytes: await reader.read(range.start, range.end) };
        }),
    );
    const others = await fragment.others;
    const chunk = fragment.chunks[index]!;
    const leadRun = chunk.find((r) => r.trackId === fragment.lead);
    const leadRange = leadRun && runRange(leadRun);
    const leadBytes = leadRange && (await reader.read(leadRange.start, leadRange.end));
    const bytesOf = (sample: Sample) => {
      const source =
        leadRange && sample.offset >= leadRange.start && sample.offset + sample.size <= leadRange.end
          ? { start: leadRange.start, bytes: leadBytes! }
          : others.find((o) => o.start <= sample.offset && sample.offset + sample.size <= o.end)!;
      return source.bytes.subarray(sample.offset - source.start, sample.offset - source.start + sample.size);
    };
    const next = fragment.starts[index + 1] ?? fragment.end;
    return { bytes: writeChunk(chunk, ++sequence, bytesOf), next };
  };

  return {
    mime,
    init,
    durationSeconds,
    firstSegment: moov.end,
    async segmentAt(offset) {
      const known = chunkAt.get(offset);
      if (known) return emit(known.fragment, known.index);
      // A source fragment: any boxes (styp, sidx, prft…), a moof, its mdat.
      for (let pos = offset; pos < reader.size;) {
        const box = readBoxHeader(await reader.read(pos, pos + HEADER_BYTES), 0, pos, reader.size);
        if (!box || box.type === 'mfra') return undefined; // the index: the media is over
        if (box.type === 'moof') return emit(await openFragment(box), 0);
        pos = box.end;
      }
      return undefined;
    },
    async offsetFor(seconds) {
      const tracks = await loadIndex();
      if (tracks.length === 0) return undefined;
      // Each track's last fragment starting at or before the time; the earliest of them, so
      // every track has data at the target.
      const starts = tracks.map((entries) => {
        let best = entries[0]?.offset;
        for (const e of entries) if (e.seconds <= seconds + 1e-3) best = e.offset;
        return best;
      });
      const known = starts.filter((s): s is number => s !== undefined);
      return known.length > 0 ? Math.min(...known) : undefined;
    },
  };
}
