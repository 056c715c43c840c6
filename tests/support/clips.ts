/**
 * Media clips for the playback benchmark and the seek tests, made with ffmpeg on first use and
 * kept in .tmp/play-clips/ (a clip's file name holds a hash of its ffmpeg arguments, so a changed
 * recipe makes a new file). Each frame shows a moving pattern with noise (so the encoder spends
 * its bitrate evenly) and its own timestamp; the sound is two tones with noise, in stereo.
 *
 * Issue 26: made the way users' files are, with ffmpeg's own encoder settings: only a target
 * bitrate (`-b:v`, a variable bitrate around it), no forced keyframe interval. Measured with
 * ffprobe (ffmpeg 5.1, Debian 12) on these 25 fps clips: libvpx-vp9 puts a keyframe every 128
 * frames (5.12 s: libvpx's own kf_max_dist, which ffmpeg leaves alone), libx264 one every 250
 * frames (10 s: its keyint; its scene-cut detection makes it 5.7–6 s on a 480×270 pattern). The
 * muxers' defaults too: WebM's Cues (the index, video keyframes only) after the last Cluster,
 * Clusters of at most 5 s (the first of the 16 MB clip is 804 kB), MP4's moov after the mdat. The
 * encoders' speed settings (`-deadline realtime -cpu-used 8`, x264's `veryfast`) change none of
 * this (checked against libvpx's `good` deadline) and keep the 30-minute clip to about 2.5
 * minutes on two cores (the 120 s clips about 20 s each). Audio is at each encoder's default
 * bitrate (Opus 96 kbit/s, AAC 128 kbit/s, MP3 128 kbit/s).
 *
 * `streaming: true` is issue 11's kinder recipe: VP8 or H.264 at a constant bitrate with a
 * keyframe every second (as live encoders do) and a quiet 32 kbit/s tone.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { MirrorOptions } from './mirror-server';

/**
 * - webm: VP9 + Opus, Cues at the end (ffmpeg's default); webm-cues-front: the Cues moved before
 *   the Clusters (`-cues_to_front 1`);
 * - mp4: H.264 + AAC, moov at the end (ffmpeg's default); mp4-faststart: moov first
 *   (`-movflags +faststart`); fmp4: fragmented, a fragment per keyframe;
 * - opus: Opus alone in WebM (audio/webm); mp3: MP3 (libmp3lame, 128 kbit/s CBR); mp3-vbr: LAME's
 *   VBR (`-q:a 2`, as rippers make them), with its Xing table of contents.
 */
export type ClipFormat = 'webm' | 'webm-cues-front' | 'mp4' | 'mp4-faststart' | 'fmp4' | 'opus' | 'mp3' | 'mp3-vbr';

export interface ClipRecipe {
  /** Short name for tables and the served file's name: 'webm-2MB'. */
  name: string;
  format: ClipFormat;
  durationSeconds: number;
  /** Video target bitrate (kbit/s), with width and height; unused by the audio formats. */
  videoKbps: number;
  width: number;
  height: number;
  /** Issue 11's recipe: a keyframe every second at a constant bitrate (see the header). */
  streaming?: boolean;
}

/** About 2 MB: the clip of issue 11's report (a 60 s WebM of 2.16 MB), at a keyframe a second. */
export const SMALL_WEBM: ClipRecipe = {
  name: 'webm-2MB-1s-keys',
  format: 'webm',
  durationSeconds: 60,
  videoKbps: 240,
  width: 480,
  height: 270,
  streaming: true,
};

const video = (name: string, format: ClipFormat, durationSeconds: number, videoKbps: number, width: number, height: number) =>
  ({ name, format, durationSeconds, videoKbps, width, height }) satisfies ClipRecipe;
const audio = (name: string, format: ClipFormat, durationSeconds: number) => video(name, format, durationSeconds, 0, 0, 0);

/** Issue 26's first report: a 60 s WebM of about 2.2 MB. */
export const WEBM_2MB = video('webm-2MB', 'webm', 60, 170, 480, 270);
/** Issue 26's second report: a 120 s WebM of about 16 MB; the other 120 s clips match it. */
export const WEBM_16MB = video('webm-16MB', 'webm', 120, 940, 640, 360);
export const WEBM_CUES_FRONT = video('webm-cues-front', 'webm-cues-front', 120, 940, 640, 360);
export const MP4_MOOV_END = video('mp4-moov-end', 'mp4', 120, 940, 640, 360);
export const MP4_FASTSTART = video('mp4-faststart', 'mp4-faststart', 120, 940, 640, 360);
export const FRAGMENTED_MP4 = video('fmp4', 'fmp4', 120, 940, 640, 360);
/** 20 s of H.264 + AAC, small enough to encode in a unit test (a keyframe every 6–10 s): the moov at the end, or fragmented. */
export const MP4_SHORT = video('mp4-20s', 'mp4', 20, 200, 320, 180);
export const FRAGMENTED_MP4_SHORT = video('fmp4-20s', 'fmp4', 20, 200, 320, 180);
/** A song or a podcast's length. */
export const OPUS_WEBM = audio('opus', 'opus', 300);
export const MP3 = audio('mp3', 'mp3', 300);
/** 20 s of MP3, CBR and VBR, small enough to encode in a unit test. */
export const MP3_SHORT = audio('mp3-20s', 'mp3', 20);
export const MP3_VBR_SHORT = audio('mp3-vbr-20s', 'mp3-vbr', 20);
/** 30 minutes at a low bitrate (about 210 kbit/s in all, 47 MB): a show's episode. */
export const LONG_WEBM = video('webm-30min', 'webm', 1800, 100, 320, 180);

export interface Clip extends ClipRecipe {
  /** Where the clip is kept. */
  path: string;
  /** The name it is served and saved under: `webm-2MB.webm`. */
  filename: string;
  size: number;
  sha256: string;
  contentType: string;
}

/** What a test server needs to serve `clip` under its own name and type (its bytes read once, here). */
export function clipServed(clip: Clip): Pick<MirrorOptions, 'size' | 'body' | 'contentType' | 'filename'> {
  return { size: clip.size, body: new Uint8Array(readFileSync(clip.path)), contentType: clip.contentType, filename: clip.filename };
}

const DIR = resolve(import.meta.dirname, '../../.tmp/play-clips');
const FPS = 25;
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';

const FORMATS: Record<ClipFormat, { extension: string; contentType: string; muxer: string[] }> = {
  webm: { extension: 'webm', contentType: 'video/webm', muxer: ['-f', 'webm'] },
  'webm-cues-front': { extension: 'webm', contentType: 'video/webm', muxer: ['-cues_to_front', '1', '-f', 'webm'] },
  mp4: { extension: 'mp4', contentType: 'video/mp4', muxer: ['-f', 'mp4'] },
  'mp4-faststart': { extension: 'mp4', contentType: 'video/mp4', muxer: ['-movflags', '+faststart', '-f', 'mp4'] },
  fmp4: { extension: 'mp4', contentType: 'video/mp4', muxer: ['-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4'] },
  opus: { extension: 'webm', contentType: 'audio/webm', muxer: ['-f', 'webm'] },
  mp3: { extension: 'mp3', contentType: 'audio/mpeg', muxer: ['-f', 'mp3'] },
  'mp3-vbr': { extension: 'mp3', contentType: 'audio/mpeg', muxer: ['-f', 'mp3'] },
};

/** The ffmpeg arguments of a clip, written to `output`. */
function ffmpegArgs(recipe: ClipRecipe, output: string): string[] {
  const { durationSeconds: d, width, height, videoKbps, format } = recipe;
  const stamp = existsSync(FONT)
    ? `,drawtext=fontfile=${FONT}:text='%{pts\\:hms}':fontsize=h/8:fontcolor=white:box=1:boxcolor=black@0.6:x=(w-tw)/2:y=h-th-h/12`
    : '';
  const pattern = ['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${FPS}:duration=${d},noise=alls=10:allf=t${stamp}`];
  const webm = format === 'webm' || format === 'webm-cues-front';
  let inputs: string[];
  let codecs: string[];
  if (recipe.streaming) {
    const rate = ['-b:v', `${videoKbps}k`, '-minrate', `${videoKbps}k`, '-maxrate', `${videoKbps}k`, '-bufsize', `${videoKbps}k`];
    const keys = ['-g', String(FPS), '-keyint_min', String(FPS)];
    inputs = [...pattern, '-f', 'lavfi', '-i', `sine=frequency=880:sample_rate=48000:duration=${d}`];
    codecs = webm
      ? ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', ...rate, ...keys, '-c:a', 'libopus', '-b:a', '32k']
      : [
          '-c:v',
          'libx264',
          '-preset',
          'veryfast',
          '-pix_fmt',
          'yuv420p',
          ...rate,
          ...keys,
          '-sc_threshold',
          '0',
          '-c:a',
          'aac',
          '-b:a',
          '32k',
        ];
  } else {
    const noise = (seed: number, hz: number) => `0.3*sin(${hz}*2*PI*t)+0.1*(random(${seed})*2-1)`;
    const sound = ['-f', 'lavfi', '-i', `aevalsrc=${noise(0, 880)}|${noise(1, 660)}:s=48000:d=${d}`];
    const audioOnly = format === 'opus' || format === 'mp3' || format === 'mp3-vbr';
    inputs = audioOnly ? sound : [...pattern, ...sound];
    codecs = audioOnly
      ? format === 'opus'
        ? ['-c:a', 'libopus']
        : ['-c:a', 'libmp3lame', ...(format === 'mp3-vbr' ? ['-q:a', '2'] : [])]
      : webm
        ? ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', `${videoKbps}k`, '-c:a', 'libopus']
        : ['-c:v', 'libx264', '-preset', 'veryfast', '-b:v', `${videoKbps}k`, '-c:a', 'aac'];
  }
  return [
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...inputs,
    ...codecs,
    ...['-fflags', '+bitexact', '-map_metadata', '-1'],
    ...FORMATS[format].muxer,
    output,
  ];
}

/**
 * How a clip is made: `background` at a lower CPU priority (nice 10), for clips made ahead while other
 * tests run (tests/e2e/support/make-clips.ts); `signal` stops it (the clip is then not made).
 */
export interface MakeOptions {
  background?: boolean;
  signal?: AbortSignal;
  /** The folder ffmpeg runs in (its relative output paths are there). */
  cwd?: string;
}

/** The clip of `recipe`, encoded now unless an earlier run (or another process of this run) made it. */
export async function clip(recipe: ClipRecipe, options: MakeOptions = {}): Promise<Clip> {
  mkdirSync(DIR, { recursive: true });
  const { extension, contentType } = FORMATS[recipe.format];
  const recipeHash = createHash('sha256')
    .update(JSON.stringify(ffmpegArgs(recipe, '')))
    .digest('hex')
    .slice(0, 10);
  const path = join(DIR, `${recipe.name}-${recipeHash}.${extension}`);
  await makeOnce(path, (partial) => ffmpeg(ffmpegArgs(recipe, partial), path, options));
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return { ...recipe, path, filename: `${recipe.name}.${extension}`, size: statSync(path).size, sha256: hash.digest('hex'), contentType };
}

/**
 * Makes `path` (a file or a folder) with `make(partial)` unless it exists, one process at a time: the
 * end-to-end run makes its clips ahead, in its own process, while a test may ask for the same clip, and
 * test files in parallel workers ask for the same stream. A lock file next to
 * `path` holds the maker's pid; a lock whose process is gone is taken over.
 */
export async function makeOnce(path: string, make: (partial: string) => Promise<void>): Promise<void> {
  const lock = `${path}.lock`;
  while (!existsSync(path)) {
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch {
      if (lockIsStale(lock)) rmSync(lock, { force: true });
      else await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if (existsSync(path)) return;
      const partial = `${path}.${process.pid}.part`;
      try {
        await make(partial);
        renameSync(partial, path);
      } finally {
        rmSync(partial, { recursive: true, force: true });
      }
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

/** A lock left by a process that is gone (or, empty, by one that died as it took it). */
function lockIsStale(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, 'utf8'));
    if (!pid) return Date.now() - statSync(lock).mtimeMs > 10_000;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** Runs ffmpeg to its end; rejects, naming `path`, if it fails. */
export function ffmpeg(args: string[], path: string, { background = false, signal, cwd }: MakeOptions): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const command = background ? ['nice', '-n', '10', 'ffmpeg', ...args] : ['ffmpeg', ...args];
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'inherit', 'inherit'], signal, cwd });
    const failed = (why: string) => reject(new Error(`ffmpeg could not make ${path} (${why}); run: bash scripts/install-system-deps.sh`));
    child.on('error', (error) => failed(error.message));
    child.on('exit', (code, killedBy) => (code === 0 ? resolvePromise() : failed(killedBy ? `killed by ${killedBy}` : `exit ${code}`)));
  });
}
