/**
 * HLS streams for the stream tests and the benchmark, made with ffmpeg's HLS muxer on first use
 * and kept in .tmp/streams/ (a folder's name holds a hash of its ffmpeg arguments). ffmpeg's own
 * settings, as a site that packages with ffmpeg has them: its 2 s segment target (hls_time), its
 * playlists, its key handling (one IV written once, for every segment). The one
 * choice made for the packager is a keyframe every 2 s (`-g 50`), as packagers and live encoders
 * set it so that segments can start on a keyframe; without it x264's 250-frame keyint makes 10 s
 * segments.
 */
import { spawnSync } from 'node:child_process';
import { createHash, createDecipheriv } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { ffmpeg, makeOnce, type MakeOptions } from './clips';
import { join, resolve } from 'node:path';

/** HLS's formats, and DASH's (ffmpeg's dash muxer: a segment per file, or one file per representation with byte ranges). */
export type StreamFormat = 'ts' | 'fmp4' | 'aes' | 'single-file' | 'aes-single-file' | 'dash' | 'dash-single-file';

export interface StreamRecipe {
  name: string;
  format: StreamFormat;
  durationSeconds: number;
  /** One variant per entry: [width, height, video kbit/s]. */
  variants: [number, number, number][];
  /** The strength of the picture's temporal noise (ffmpeg's `noise=alls`), 10 unless given: less encodes faster. */
  noise?: number;
}

/** Three variants over MPEG-TS, with a master playlist (`master.m3u8`, variants in `v0/`, `v1/`, `v2/`). */
export const TS_VARIANTS: StreamRecipe = {
  name: 'ts-3',
  format: 'ts',
  durationSeconds: 30,
  variants: [
    [320, 180, 150],
    [480, 270, 300],
    [640, 360, 600],
  ],
};
/** Fragmented MP4 segments after an initialization section (EXT-X-MAP). */
export const FMP4: StreamRecipe = { name: 'fmp4', format: 'fmp4', durationSeconds: 30, variants: [[480, 270, 400]] };
/** MPEG-TS segments encrypted with AES-128 (a key file beside them). */
export const AES: StreamRecipe = { name: 'aes', format: 'aes', durationSeconds: 30, variants: [[480, 270, 400]] };
/** One .ts file whose segments are byte ranges of it (EXT-X-BYTERANGE). */
export const SINGLE_FILE: StreamRecipe = { name: 'single-file', format: 'single-file', durationSeconds: 30, variants: [[480, 270, 400]] };
/** Both: one .ts file of AES-128 encrypted segments, each a byte range of it. */
export const AES_SINGLE_FILE: StreamRecipe = {
  name: 'aes-single-file',
  format: 'aes-single-file',
  durationSeconds: 30,
  variants: [[480, 270, 400]],
};
/**
 * Issue 30's goal, the benchmark's stream: ten minutes of 720p at a typical 720p bitrate (2.8 Mbit/s
 * of video, 300 segments, 223 MB), over MPEG-TS. Lighter noise than the others': x264 fills the
 * bitrate all the same, and it took 7.3 minutes of CPU (13.5 on a busy 2-core machine) where the
 * others' noise would take about 1.5 times as long. Made once, then kept in .tmp/streams/.
 */
export const HD_10_MINUTES: StreamRecipe = {
  name: '720p-10min',
  format: 'ts',
  durationSeconds: 600,
  variants: [[1280, 720, 2800]],
  noise: 2,
};

/**
 * DASH as ffmpeg's dash muxer makes it with its defaults (`manifest.mpd`): picture and sound in
 * adaptation sets of their own, segments by SegmentTemplate and SegmentTimeline, two qualities of
 * the picture. Sound and picture segments do not line up (ffmpeg cuts the picture on its keyframes).
 */
export const DASH: StreamRecipe = {
  name: 'dash',
  format: 'dash',
  durationSeconds: 30,
  variants: [
    [320, 180, 150],
    [640, 360, 500],
  ],
};
/** DASH with one file per representation, its segments byte ranges of it (SegmentList, mediaRange). */
export const DASH_SINGLE_FILE: StreamRecipe = {
  name: 'dash-single-file',
  format: 'dash-single-file',
  durationSeconds: 30,
  variants: [[480, 270, 400]],
};

/**
 * The stream player's seek test: two minutes of 360p over MPEG-TS (60 segments, about 10 MB), long
 * enough that a seek to 80 % lands far ahead of what a download at twice its bitrate has reached.
 */
export const SEEK_2_MINUTES: StreamRecipe = {
  name: 'seek-2min',
  format: 'ts',
  durationSeconds: 120,
  variants: [[640, 360, 500]],
  noise: 2,
};

export interface MadeStream extends StreamRecipe {
  /** The folder served: `master.m3u8` (always) and the variants' folders `v0/`… */
  dir: string;
}

const DIR = resolve(import.meta.dirname, '../../.tmp/streams');
const FPS = 25;
/** The key of the AES recipe (fixed: a test decrypts with it). */
export const STREAM_KEY = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');

function ffmpegArgs(recipe: StreamRecipe): string[] {
  const { variants, format } = recipe;
  if (format === 'dash' || format === 'dash-single-file') return dashArgs(recipe);
  const inputs = sourceInputs(recipe);
  const split = variants.map((_, i) => `[s${i}]`).join('');
  const scaled = variants.map(([w, h], i) => `[s${i}]scale=${w}:${h}[v${i}]`).join(';');
  const maps = variants.flatMap((_, i) => ['-map', `[v${i}]`, '-map', '1:a']);
  const rates = variants.flatMap(([, , kbps], i) => [`-b:v:${i}`, `${kbps}k`]);
  const streamMap = variants.map((_, i) => `v:${i},a:${i}`).join(' ');
  const muxer: Record<typeof format, string[]> = {
    ts: [],
    fmp4: ['-hls_segment_type', 'fmp4'],
    aes: ['-hls_key_info_file', 'key.info'],
    'single-file': ['-hls_flags', 'single_file'],
    'aes-single-file': ['-hls_key_info_file', 'key.info', '-hls_flags', 'single_file'],
  };
  const segmentName = format === 'fmp4' ? 'v%v/seg%d.m4s' : format.endsWith('single-file') ? 'v%v/all.ts' : 'v%v/seg%d.ts';
  return [
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...inputs,
    ...['-filter_complex', `[0:v]split=${variants.length}${split};${scaled}`],
    ...maps,
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', String(2 * FPS), ...rates, '-c:a', 'aac'],
    ...['-fflags', '+bitexact', '-map_metadata', '-1'],
    ...['-f', 'hls', '-hls_playlist_type', 'vod', ...muxer[format]],
    ...['-var_stream_map', streamMap, '-master_pl_name', 'master.m3u8', '-hls_segment_filename', segmentName, 'v%v/index.m3u8'],
  ];
}

/** The picture and the sound, as every recipe has them (ffmpeg's test pattern with noise, a tone with noise). */
function sourceInputs({ durationSeconds: d, variants, noise = 10 }: StreamRecipe): string[] {
  const [width, height] = variants[variants.length - 1]!;
  return [
    ...['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${FPS}:duration=${d},noise=alls=${noise}:allf=t`],
    ...['-f', 'lavfi', '-i', `aevalsrc=0.3*sin(880*2*PI*t)+0.1*(random(0)*2-1):s=48000:d=${d}`],
  ];
}

/** ffmpeg's dash muxer with its defaults: one adaptation set per stream, the sound once. */
function dashArgs(recipe: StreamRecipe): string[] {
  const { variants } = recipe;
  const split = variants.map((_, i) => `[s${i}]`).join('');
  const scaled = variants.map(([w, h], i) => `[s${i}]scale=${w}:${h}[v${i}]`).join(';');
  return [
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...sourceInputs(recipe),
    ...['-filter_complex', `[0:v]split=${variants.length}${split};${scaled}`],
    ...variants.flatMap((_, i) => ['-map', `[v${i}]`]),
    ...['-map', '1:a'],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', String(2 * FPS), ...variants.flatMap(([, , kbps], i) => [`-b:v:${i}`, `${kbps}k`])],
    ...['-c:a', 'aac', '-fflags', '+bitexact', '-map_metadata', '-1'],
    ...['-f', 'dash', ...(recipe.format === 'dash-single-file' ? ['-single_file', '1'] : []), 'manifest.mpd'],
  ];
}

/**
 * A DASH stream's representation (`id`, as its manifest numbers them: the pictures first, then the
 * sound) as one file: its initialization and media joined, read from ffmpeg's own files.
 */
export function dashTrackBytes(made: MadeStream, id: number): Buffer {
  if (made.format === 'dash-single-file') return readFileSync(join(made.dir, `manifest-stream${id}.mp4`));
  const names = readdirSync(made.dir)
    .filter((name) => name.startsWith(`chunk-stream${id}-`))
    .sort();
  return Buffer.concat([readFileSync(join(made.dir, `init-stream${id}.m4s`)), ...names.map((name) => readFileSync(join(made.dir, name)))]);
}

/**
 * The packets of a media file's stream `map` (`0:v`, `0:a`) as ffmpeg reads them: each one's size
 * and MD5, in order. Two files whose lists match carry the same media, whatever their boxes.
 */
export function packets(path: string, map: string): string[] {
  const run = spawnSync('ffmpeg', ['-v', 'error', '-i', path, '-map', map, '-c', 'copy', '-f', 'framemd5', '-'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`ffmpeg could not read ${path}: ${run.stderr}`);
  return run.stdout
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) =>
      line
        .split(',')
        .slice(4)
        .map((field) => field.trim())
        .join(' '),
    );
}

/** The stream of `recipe`, made now unless an earlier run (or another process of this run) made it. */
export async function stream(recipe: StreamRecipe, { background, signal }: Omit<MakeOptions, 'cwd'> = {}): Promise<MadeStream> {
  const args = ffmpegArgs(recipe);
  const hash = createHash('sha256').update(JSON.stringify(args)).digest('hex').slice(0, 10);
  const dir = join(DIR, `${recipe.name}-${hash}`);
  mkdirSync(DIR, { recursive: true });
  await makeOnce(dir, async (partial) => {
    mkdirSync(partial, { recursive: true });
    if (!recipe.format.startsWith('dash')) recipe.variants.forEach((_, i) => mkdirSync(join(partial, `v${i}`)));
    if (recipe.format.startsWith('aes')) {
      writeFileSync(join(partial, 'stream.key'), STREAM_KEY);
      // The key's URI as the playlists carry it (relative to each variant's playlist), and where ffmpeg reads it.
      writeFileSync(join(partial, 'key.info'), `../stream.key\n${join(partial, 'stream.key')}\n`);
    }
    await ffmpeg(args, dir, { cwd: partial, background, signal });
    rmSync(join(partial, 'key.info'), { force: true });
  });
  return { ...recipe, dir };
}

/**
 * What a download of variant `variant` must save: its parts joined (the initialization section
 * first), decrypted when encrypted. Read from ffmpeg's own files, not through the code under test.
 */
export function expectedBytes(made: MadeStream, variant: number): Buffer {
  const folder = join(made.dir, `v${variant}`);
  const playlist = readFileSync(join(folder, 'index.m3u8'), 'utf8');
  const parts: Buffer[] = [];
  const map = /#EXT-X-MAP:URI="([^"]+)"/.exec(playlist);
  if (map) parts.push(readFileSync(join(folder, map[1]!)));
  let sequence = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)?.[1] ?? 0);
  let byterange: { length: number; offset: number } | undefined;
  let nextOffset = 0;
  for (const line of playlist.split('\n')) {
    const range = /^#EXT-X-BYTERANGE:(\d+)(?:@(\d+))?/.exec(line);
    if (range) {
      const length = Number(range[1]);
      const offset = range[2] === undefined ? nextOffset : Number(range[2]);
      byterange = { length, offset };
      nextOffset = offset + length;
    }
    if (line === '' || line.startsWith('#')) continue;
    let bytes = readFileSync(join(folder, line.trim()));
    if (byterange) bytes = bytes.subarray(byterange.offset, byterange.offset + byterange.length);
    byterange = undefined;
    if (made.format.startsWith('aes')) {
      // The playlist's IV when it gives one (ffmpeg does, once, for every segment), else the sequence number.
      const given = /#EXT-X-KEY:.*IV=0x([0-9a-f]{32})/i.exec(playlist)?.[1];
      const iv = given ? Buffer.from(given, 'hex') : Buffer.alloc(16);
      if (!given) iv.writeUInt32BE(sequence, 12);
      const decipher = createDecipheriv('aes-128-cbc', STREAM_KEY, iv);
      bytes = Buffer.concat([decipher.update(bytes), decipher.final()]);
    }
    sequence++;
    parts.push(bytes);
  }
  return Buffer.concat(parts);
}

/** The files of a made stream's variant folder (to check what a server was asked for). */
export function segmentNames(made: MadeStream, variant: number): string[] {
  return readdirSync(join(made.dir, `v${variant}`)).filter((name) => !name.endsWith('.m3u8'));
}

/**
 * A master playlist listing `made`'s variants on each of `origins` (redundant hosts: the same
 * variant under several URIs, as RFC 8216 §6.3.2 describes them), in the order of the origins.
 */
export function redundantMaster(made: MadeStream, origins: readonly string[]): string {
  const master = readFileSync(join(made.dir, 'master.m3u8'), 'utf8').split('\n');
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3'];
  for (let i = 0; i < master.length; i++) {
    const line = master[i]!;
    if (!line.startsWith('#EXT-X-STREAM-INF')) continue;
    const uri = master[i + 1]!.trim();
    for (const origin of origins) lines.push(line, `${origin}/${uri}`);
  }
  return `${lines.join('\n')}\n`;
}

/** What ffprobe reads of a media file's duration, in seconds (NaN when it cannot read the file). */
export function probedSeconds(path: string): number {
  const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', path], { encoding: 'utf8' });
  return probe.status === 0 ? Number(probe.stdout.trim()) : NaN;
}
