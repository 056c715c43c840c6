import { createFile, MP4BoxBuffer, type ISOFile, type Movie } from 'mp4box';
import { concat, readBoxHeader } from '../../engine/streams/mp4-boxes';
import { withoutPriming } from './audio-priming';
import { FRAGMENT_SAMPLES, Unsupported, type MediaSegments, type StoredReader } from './segments';

/**
 * Plain (non-fragmented) MP4 for MSE, remuxed into fragments by mp4box (docs/platform.md,
 * "Playing"). The stored bytes are fed to mp4box in order; when the moov comes
 * after the mdat, mp4box parses the mdat's header and asks for the byte after it: that range
 * is read next (the reader tells the engine it needs it, so the streaming priority fetches the
 * moov first), then the mdat is fed in order. Each track is cut into fragments of FRAGMENT_SAMPLES
 * samples (the same count for every track: with different counts mp4box silently drops a
 * track); all tracks share one combined init segment, so the feeder's single SourceBuffer
 * takes each track's moof + mdat as it comes. Seeking uses mp4box's own seek to a sync sample.
 */

/** Most bytes fed to mp4box at a time, once the moov is parsed. */
const CHUNK = 256 * 1024;
/** Bytes read at a time while looking for the moov (small: with the moov at the end, only the first read is of the media). */
const HEAD_CHUNK = 16 * 1024;
/** Give up finding the moov after feeding this many bytes in order (a faststart moov is small). */
const MAX_HEAD = 32 * 1024 * 1024;

/** MediaSegments plus what tests look at: the sample counts. */
export interface PlainMp4Source extends MediaSegments {
  /** Track id → number of samples in the file. */
  readonly sampleCounts: Map<number, number>;
}

/** A plain MP4 remuxed for MSE; Unsupported for a fragmented one or one mp4box cannot read. */
export async function openPlainMp4(reader: StoredReader, chunkBytes = CHUNK): Promise<PlainMp4Source> {
  // keepMdatData: segmentation needs the sample bytes (without it mp4box silently makes nothing).
  const file: ISOFile<unknown, unknown> = createFile(true);
  /** Fragments mp4box made and no segment took yet. */
  const queue: Uint8Array[] = [];
  let info: Movie | undefined;
  let error: string | undefined;
  file.onReady = (movie) => (info = movie);
  file.onError = (module, message) => (error = `${module}: ${message}`);

  const feed = (bytes: Uint8Array, at: number, last = false): number => {
    const buffer = MP4BoxBuffer.fromArrayBuffer(bytes.slice().buffer, at);
    return file.appendBuffer(buffer, last);
  };

  // Feed from the start until the moov is parsed, jumping where mp4box asks (moov at the end).
  let pos = 0;
  let fedInOrder = 0;
  while (!info) {
    if (error) throw new Unsupported('unreadable', `mp4box could not read this MP4 file (${error})`);
    if (pos >= reader.size || fedInOrder > MAX_HEAD) throw new Unsupported('layout', 'no moov box found in this MP4 file');
    let end = Math.min(reader.size, pos + HEAD_CHUNK);
    if (pos !== fedInOrder) {
      // mp4box jumped past the mdat: a moov there is read whole, in one read.
      const box = readBoxHeader(await reader.read(pos, pos + 16), 0, pos, reader.size);
      if (box?.type === 'moov') end = Math.min(reader.size, box.end);
    }
    const next = feed(await reader.read(pos, end), pos, end >= reader.size);
    if (pos === fedInOrder) fedInOrder = end;
    pos = typeof next === 'number' && next > pos ? next : end;
  }
  const movie = info;
  if (movie.isFragmented) throw new Unsupported('layout', 'this MP4 file is fragmented');
  const tracks = movie.tracks.filter((t) => movie.videoTracks.includes(t) || movie.audioTracks.includes(t));
  if (tracks.length === 0) throw new Unsupported('unreadable', 'this MP4 file has no audio or video track');
  const codecs = tracks.map((t) => mseCodec(t.codec));
  const mime = `${movie.videoTracks.length > 0 ? 'video' : 'audio'}/mp4; codecs="${codecs.join(',')}"`;
  const sampleCounts = new Map(tracks.map((t) => [t.id, t.nb_samples]));

  // Not aligned on keyframes (mp4box's default): x264 puts one every 6–10 s, and a fragment that
  // waits for the next one holds back the first frame and every seek by that long. MSE needs a
  // keyframe only at the start, and after a seek mp4box starts again from one.
  for (const track of tracks) file.setSegmentOptions(track.id, undefined, { nbSamples: FRAGMENT_SAMPLES, rapAlignement: false });
  const init = withoutPriming(new Uint8Array(file.initializeSegmentation().buffer), movie.audioTracks);
  file.onSegment = (id, _user, buffer, nextSample) => {
    queue.push(new Uint8Array(buffer));
    file.releaseUsedSamples(id, nextSample);
  };
  file.start();

  // The mdat starts before the moov (moov at the end) or after it: feeding continues from the
  // end of what was fed in order from byte 0 (mp4box keeps the bytes it was given).
  let flushed = false;
  const take = (next: number) => {
    const made = queue.splice(0);
    const bytes = made.length === 1 ? made[0]! : concat(made);
    return { bytes, next };
  };

  const source: PlainMp4Source = {
    mime,
    init,
    durationSeconds: movie.timescale > 0 && movie.duration > 0 ? movie.duration / movie.timescale : undefined,
    firstSegment: fedInOrder,
    sampleCounts,
    async segmentAt(offset) {
      // Whatever mp4box already made (at start(), or at the end of the last feed).
      if (queue.length > 0) return take(offset);
      for (let at = offset; at < reader.size;) {
        // What is stored now, not a whole chunk: after a seek, the first fragment plays as soon as its samples arrive.
        const bytes = await reader.readAvailable(at, at + chunkBytes);
        const end = at + bytes.length;
        feed(bytes, at, end >= reader.size);
        at = end;
        if (at >= reader.size && !flushed) {
          file.flush();
          flushed = true;
        }
        if (error) throw new Error(`mp4box: ${error}`);
        if (queue.length > 0) return take(at);
      }
      if (!flushed) {
        file.flush();
        flushed = true;
      }
      return queue.length > 0 ? take(reader.size) : undefined;
    },
    async offsetFor(seconds) {
      queue.length = 0;
      flushed = false;
      const { offset } = file.seek(seconds, true);
      return Number.isFinite(offset) ? Math.min(offset, reader.size) : undefined;
    },
  };
  return source;
}

/** mp4box's codec string as MSE wants it (`Opus` → `opus`, `fLaC` → `flac`). */
function mseCodec(codec: string): string {
  if (codec === 'Opus') return 'opus';
  if (codec === 'fLaC') return 'flac';
  return codec;
}
