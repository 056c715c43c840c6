import { parseContentRange, sanitizeFilename } from '../http/headers';
import { partSizeRefusal, StreamBoundsError } from './stream-bounds';
import { bytesToHex } from '../integrity/digests';
import { MAX_SEGMENTS } from './dash-bounds';
import { parseDashManifest, type DashRepresentation } from './dash-manifest';
import { muxInit, readSegmentIndex, SEGMENT_SCAN_BYTES, segmentPatches, UnmuxableStream } from './fmp4-mux';
import { bestVariant, refuseSite, StreamRefusal, type HlsResource, type HlsVariant } from './hls-playlist';
import { streamStem, type StreamPart } from './stream-layout';
import { mapLimited, PlanRequests, PROBE_CONCURRENCY_PER_HOST, readAtMost, type PlanOptions, type StreamPlan } from './stream-plan';

/** An initialization section or a segment index larger than this is not one. */
const MAX_HEADER_BYTES = 1024 * 1024;
/** A segment read whole (its server ignores ranges) to find its boxes: larger ones are refused. */
const MAX_WHOLE_SEGMENT_BYTES = 64 * 1024 * 1024;

/** A DASH stream's chosen representations: the picture (if any) and the sound (if any). */
export interface DashChoice {
  /** The picture's representations offered, the chosen one first (as HLS variants). */
  variants: HlsVariant[];
  picture?: DashRepresentation;
  sound?: DashRepresentation;
  durationSeconds: number;
}

/** Reads a DASH manifest's text (`text`, from `url`): the picture chosen (the best by default) and the best sound. */
export function readDashStream(url: string, text: string, options: Pick<PlanOptions, 'choose' | 'pageUrl'>): DashChoice {
  refuseSite(url, options.pageUrl);
  const manifest = parseDashManifest(text, url);
  const offered = manifest.pictures.map((picture) => picture.variant);
  const chosen = offered.length ? (options.choose ?? bestVariant)(offered) : undefined;
  if (offered.length && !chosen) throw new StreamRefusal('empty', `${url} lists no representation of the stream`);
  return {
    variants: chosen ? [chosen, ...offered.filter((variant) => variant !== chosen)] : [],
    picture: manifest.pictures.find((picture) => picture.variant === chosen),
    sound: manifest.sounds[0],
    durationSeconds: manifest.durationSeconds,
  };
}

interface Segment {
  uri: string;
  byterange?: HlsResource['byterange'];
  duration: number;
  sound: boolean;
}

/**
 * Lays a DASH stream out as one fragmented MP4: one initialization section for picture and sound
 * (fmp4-mux.ts), then both tracks' segments in time order, each as the server sends it but for the
 * few bytes its patches change. Each segment's first bytes are asked (its size, and where its boxes
 * are); a segment index (SegmentBase) is read for its segments. One track alone is joined as it is.
 */
export async function planDashStream(url: string, text: string, options: PlanOptions & { name?: string }): Promise<StreamPlan> {
  const requests = new PlanRequests(options);
  const choice = readDashStream(url, text, options);
  const tracks = [choice.picture, choice.sound].filter((track) => track !== undefined);
  const [inits, lists] = await joinable(() =>
    Promise.all([
      Promise.all(tracks.map((track) => readResource(track.init, requests, MAX_HEADER_BYTES))),
      Promise.all(tracks.map((track) => segmentsOf(track, requests))),
    ]),
  );
  // The manifest's own count was bounded (dash-bounds.ts); segment indexes add theirs.
  const indexed = lists.reduce((sum, list) => sum + list.length, 0);
  if (indexed > MAX_SEGMENTS) {
    const [has, most] = [indexed, MAX_SEGMENTS].map((n) => n.toLocaleString('en-US'));
    throw new StreamRefusal('too-large', `${url} has ${has} segments in its segment indexes, more than the ${most} Stitch joins`);
  }
  const both = tracks.length === 2;
  const muxed = both ? await joinable(() => muxInit(inits[0]!, inits[1]!)) : undefined;
  const segments = inTimeOrder(lists.map((list, track) => list.map((segment) => ({ ...segment, sound: both && track === 1 }))));
  const parts = await joinable(() =>
    mapLimited(segments, PROBE_CONCURRENCY_PER_HOST, (segment, index) =>
      probeSegment(segment, `segment ${index + 1} of ${segments.length} (${segment.uri})`, requests, muxed?.soundTrack),
    ),
  );
  const init: StreamPart = muxed
    ? { length: muxed.bytes.length, sourceOffset: 0, sourceLength: muxed.bytes.length, literal: bytesToHex(muxed.bytes) }
    : { length: inits[0]!.length, sourceOffset: tracks[0]!.init.byterange?.offset ?? 0, sourceLength: inits[0]!.length };
  const audioOnly = !choice.picture;
  const stem = options.name ?? streamStem(url);
  return {
    layout: {
      kind: 'dash',
      playlist: url,
      filename: sanitizeFilename(`${stem}.${audioOnly ? 'm4a' : 'mp4'}`),
      contentType: audioOnly ? 'audio/mp4' : 'video/mp4',
      durationSeconds: choice.durationSeconds,
      parts: [init, ...parts],
      sources: [{ url, uris: [muxed ? '' : tracks[0]!.init.uri, ...segments.map((segment) => segment.uri)] }],
      keys: [],
    },
    variants: choice.variants,
    notes: [],
  };
}

/** `work`'s result; a stream its boxes make impossible to join is refused in words. */
async function joinable<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UnmuxableStream)
      throw new StreamRefusal('not-a-playlist', `this stream's segments cannot be joined: ${error.message}`);
    throw error;
  }
}

/** A track's segments: listed in the manifest, or read from its segment index. */
async function segmentsOf(track: DashRepresentation, requests: PlanRequests): Promise<Omit<Segment, 'sound'>[]> {
  if (Array.isArray(track.segments)) return track.segments;
  const { index } = track.segments;
  const sidx = readSegmentIndex(await readResource(index, requests, MAX_HEADER_BYTES));
  let offset = index.byterange.offset + sidx.boxSize + sidx.firstOffset;
  return sidx.references.map((reference) => {
    const segment = { uri: index.uri, byterange: { offset, length: reference.size }, duration: reference.seconds };
    offset += reference.size;
    return segment;
  });
}

/** Both tracks' segments in the order of their start times (the picture's first on a tie). */
function inTimeOrder(tracks: Segment[][]): Segment[] {
  const timed = tracks.flatMap((segments, track) => {
    let start = 0;
    return segments.map((segment) => {
      const at = start;
      start += segment.duration;
      return { segment, at, track };
    });
  });
  return timed.sort((a, b) => a.at - b.at || a.track - b.track).map(({ segment }) => segment);
}

/** A resource (or its range) read whole: an initialization section, a segment index. */
async function readResource(resource: HlsResource, requests: PlanRequests, max: number): Promise<Uint8Array> {
  const range = resource.byterange;
  const headers: Record<string, string> = range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {};
  return requests.read(resource.uri, headers, async (response) => {
    if (!response.ok) throw new Error(`${resource.uri} answered ${response.status} ${response.statusText}`.trim());
    const bytes = await readAtMost(response, max);
    if (bytes.length > max) throw new Error(`${resource.uri} is larger than ${max} bytes: not a stream's header`);
    // A server that ignores the range sends the whole resource: the range is cut from it.
    return range && response.status === 200 ? bytes.subarray(range.offset, range.offset + range.length) : bytes;
  });
}

/** A segment's part of the file: its size (asked with its first bytes) and, when muxed, its patches. */
async function probeSegment(
  segment: Segment,
  what: string,
  requests: PlanRequests,
  soundTrack: { from: number; to: number } | undefined,
): Promise<StreamPart> {
  const offset = segment.byterange?.offset ?? 0;
  const known = segment.byterange?.length;
  const read = (at: number, length: number) => {
    const last = known === undefined ? at + length - 1 : Math.min(at + length, known) - 1;
    return requests.read(segment.uri, { Range: `bytes=${offset + at}-${offset + last}` }, async (response) => {
      if (response.status === 206) {
        const range = parseContentRange(response.headers.get('content-range'));
        return { total: range?.kind === 'bytes' ? range.total : undefined, bytes: await readAtMost(response, last - at) };
      }
      if (response.status === 200) {
        // Ranges ignored: the whole resource, kept only up to what is wanted.
        const whole = await readAtMost(response, MAX_WHOLE_SEGMENT_BYTES);
        if (whole.length > MAX_WHOLE_SEGMENT_BYTES) throw new Error(`${what} ignores ranges and is too large to read whole`);
        return { total: whole.length, bytes: whole.subarray(offset + at, offset + last + 1) };
      }
      throw new Error(`${what} answered ${response.status} ${response.statusText}`.trim());
    });
  };
  const first = await read(0, SEGMENT_SCAN_BYTES);
  if (first.total === undefined && known === undefined) throw new Error(`${what} did not say its size`);
  const length = known ?? first.total! - offset;
  const seconds = segment.duration;
  // The same bound as an HLS part's (stream-bounds.ts): a Content-Range total of petabytes is a lie.
  const refusal = Number.isSafeInteger(length) && length >= 0 ? partSizeRefusal(what, length, seconds) : `${what} has no valid size`;
  if (refusal) throw new StreamBoundsError(refusal);
  const plain: StreamPart = { length, sourceOffset: offset, sourceLength: length, resourceSize: first.total, seconds };
  if (!soundTrack) return plain;
  const patches = await segmentPatches(
    first.bytes,
    length,
    async (at, count) => (await read(at, count)).bytes,
    segment.sound ? soundTrack : undefined,
  );
  return { ...plain, ...(patches.length && { patches }), ...(segment.sound && { sound: true as const }) };
}
