/**
 * Video clips for the playback benchmark and the seek tests, made with ffmpeg on first use and kept in .tmp/play-clips/
 * (a clip's name holds every parameter, so a changed recipe makes a new file). Each frame shows
 * a moving pattern with noise (so the encoder spends its bitrate evenly) and its own timestamp;
 * a keyframe every second, as streaming encoders do, so a seek lands within a second.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface ClipRecipe {
  /** Short name for the table: 'webm-2MB'. */
  name: string;
  container: 'webm' | 'mp4';
  durationSeconds: number;
  /** Video bitrate (kbit/s); audio adds 32 kbit/s. */
  videoKbps: number;
  width: number;
  height: number;
}

/** About 2 MB: the clip of issue 11's report (a 60 s WebM of 2.16 MB). */
export const SMALL_WEBM: ClipRecipe = { name: 'webm-2MB', container: 'webm', durationSeconds: 60, videoKbps: 240, width: 480, height: 270 };
export const LARGE_WEBM: ClipRecipe = {
  name: 'webm-16MB',
  container: 'webm',
  durationSeconds: 120,
  videoKbps: 1040,
  width: 640,
  height: 360,
};
/** Plain MP4, moov at the end: a player must fetch the tail before it can play. */
export const SMALL_MP4: ClipRecipe = { name: 'mp4-2MB', container: 'mp4', durationSeconds: 60, videoKbps: 240, width: 480, height: 270 };

export interface Clip extends ClipRecipe {
  path: string;
  size: number;
  sha256: string;
  contentType: string;
  filename: string;
}

const DIR = resolve(import.meta.dirname, '../../.tmp/play-clips');
const FPS = 25;
const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';

/** The ffmpeg arguments of a clip: VP8 + Opus in WebM, or H.264 + AAC in plain MP4 (moov at the end, ffmpeg's default). */
function ffmpegArgs(recipe: ClipRecipe, output: string): string[] {
  const { durationSeconds: d, width, height, videoKbps } = recipe;
  const stamp = existsSync(FONT)
    ? `,drawtext=fontfile=${FONT}:text='%{pts\\:hms}':fontsize=h/8:fontcolor=white:box=1:boxcolor=black@0.6:x=(w-tw)/2:y=h-th-h/12`
    : '';
  const rate = [`-b:v`, `${videoKbps}k`, '-minrate', `${videoKbps}k`, '-maxrate', `${videoKbps}k`, '-bufsize', `${videoKbps}k`];
  const keyframes = ['-g', String(FPS), '-keyint_min', String(FPS)];
  const codecs =
    recipe.container === 'webm'
      ? ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', ...rate, ...keyframes, '-c:a', 'libopus', '-b:a', '32k']
      : [
          '-c:v',
          'libx264',
          '-preset',
          'veryfast',
          '-pix_fmt',
          'yuv420p',
          ...rate,
          ...keyframes,
          '-sc_threshold',
          '0',
          '-c:a',
          'aac',
          '-b:a',
          '32k',
        ];
  return [
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...['-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=${FPS}:duration=${d},noise=alls=10:allf=t${stamp}`],
    ...['-f', 'lavfi', '-i', `sine=frequency=880:sample_rate=48000:duration=${d}`],
    ...codecs,
    ...['-fflags', '+bitexact', '-map_metadata', '-1', '-f', recipe.container, output],
  ];
}

/** The clip of `recipe`, encoded now unless an earlier run left it. */
export async function clip(recipe: ClipRecipe): Promise<Clip> {
  mkdirSync(DIR, { recursive: true });
  const { container, durationSeconds, videoKbps, width, height } = recipe;
  const filename = `${recipe.name}-${durationSeconds}s-${width}x${height}-${videoKbps}k.${container}`;
  const path = join(DIR, filename);
  if (!existsSync(path)) {
    const partial = `${path}.part`;
    const made = spawnSync('ffmpeg', ffmpegArgs(recipe, partial), { stdio: ['ignore', 'inherit', 'inherit'] });
    if (made.error || made.status !== 0) {
      throw new Error(
        `ffmpeg could not make ${filename} (${made.error?.message ?? `exit ${made.status}`}); run: bash scripts/install-system-deps.sh`,
      );
    }
    renameSync(partial, path);
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return {
    ...recipe,
    path,
    size: statSync(path).size,
    sha256: hash.digest('hex'),
    contentType: container === 'webm' ? 'video/webm' : 'video/mp4',
    filename,
  };
}
