import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runStitch, startStitch } from '../support/cli';
import { streamTestBed, type StreamServer } from '../support/stream-server';
import {
  AES,
  AES_SINGLE_FILE,
  expectedBytes,
  FMP4,
  probedSeconds,
  redundantMaster,
  SINGLE_FILE,
  stream,
  TS_VARIANTS,
  type MadeStream,
} from '../support/streams';

// Issue 30: `stitch get PLAYLIST.m3u8` saves an HLS stream as one file, exact against ffmpeg's
// own segments, over the engine (blocks, mirrors, retries), against loopback stream servers.
const made: Record<string, MadeStream> = {};
const bed = streamTestBed('stitch-streams-');
const serve = bed.serve;

beforeAll(async () => {
  for (const recipe of [TS_VARIANTS, FMP4, AES, SINGLE_FILE, AES_SINGLE_FILE]) made[recipe.name] = await stream(recipe);
}, 180_000);

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The saved file's only file in the folder, read. */
function saved(name: string): Buffer {
  expect(readdirSync(bed.dir)).toEqual([name]);
  return readFileSync(join(bed.dir, name));
}

/**
 * A live playlist over the variant v2's segments: a window of the last four published, one more
 * published every 400 ms (a target duration of 1 s), and EXT-X-ENDLIST once all are.
 */
function slidingPlaylist(stream: MadeStream) {
  const names = readFileSync(join(stream.dir, 'v2/index.m3u8'), 'utf8')
    .split('\n')
    .filter((line) => line.endsWith('.ts'));
  const segments = names.map((name) => readFileSync(join(stream.dir, 'v2', name)));
  const started = Date.now();
  const published = () => Math.min(names.length, 4 + Math.floor((Date.now() - started) / 400));
  /** The last segment's index + 1 in each playlist served. */
  const windowEnds: number[] = [];
  const playlist = () => {
    const end = published();
    windowEnds.push(end);
    const start = Math.max(0, end - 4);
    const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:1', `#EXT-X-MEDIA-SEQUENCE:${start}`];
    for (let i = start; i < end; i++) lines.push('#EXTINF:2.0,', `v2/${names[i]}`);
    if (end === names.length) lines.push('#EXT-X-ENDLIST');
    return `${lines.join('\n')}\n`;
  };
  const firstFetched = (server: StreamServer) => names.indexOf(server.requests.find((r) => r.path.startsWith('/v2/seg'))!.path.slice(4));
  return { segments, playlist, published, firstFetched, windowEnds };
}

describe('stitch get on an HLS stream', () => {
  it('saves the best variant of a master playlist as one .ts, exact, with its full duration', async () => {
    const stream = made['ts-3']!;
    const server = await serve({ root: stream.dir });
    const result = await runStitch(['get', `${server.origin}/master.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.stderr).toContain('640×360');
    expect(result.code, result.stderr).toBe(0);
    const file = saved('master.ts');
    expect(sha256(file)).toBe(sha256(expectedBytes(stream, 2)));
    expect(probedSeconds(join(bed.dir, 'master.ts'))).toBeGreaterThan(29);
    // Only the chosen variant's segments were fetched.
    expect(server.requests.filter((r) => /^\/v[01]\//.test(r.path)).map((r) => r.path)).toEqual([]);
  });

  it('joins fragmented MP4 segments after their initialization section into an .mp4', async () => {
    const stream = made.fmp4!;
    const server = await serve({ root: stream.dir });
    const result = await runStitch(['get', `${server.origin}/v0/index.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(saved('index.mp4'))).toBe(sha256(expectedBytes(stream, 0)));
    expect(probedSeconds(join(bed.dir, 'index.mp4'))).toBeGreaterThan(29);
  });

  it('decrypts AES-128 segments that are byte ranges of one file, from a server that ignores ranges', async () => {
    const stream = made['aes-single-file']!;
    const server = await serve({ root: stream.dir, ignoreRanges: true });
    const result = await runStitch(['get', `${server.origin}/v0/index.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(saved('index.ts'))).toBe(sha256(expectedBytes(stream, 0)));
    expect(server.requests.every((r) => r.status === 200)).toBe(true);
  });

  it('decrypts AES-128 segments with their key', async () => {
    const stream = made.aes!;
    const server = await serve({ root: stream.dir });
    const result = await runStitch(['get', `${server.origin}/master.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(saved('master.ts'))).toBe(sha256(expectedBytes(stream, 0)));
    expect(probedSeconds(join(bed.dir, 'master.ts'))).toBeGreaterThan(29);
    expect(server.requests.filter((r) => r.path === '/stream.key')).toHaveLength(1);
  });

  it('takes byte-range segments of one file with ranges of it', async () => {
    const stream = made['single-file']!;
    const server = await serve({ root: stream.dir });
    const result = await runStitch(['get', `${server.origin}/v0/index.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(saved('index.ts'))).toBe(sha256(expectedBytes(stream, 0)));
    // No probe: EXT-X-BYTERANGE gave every size.
    expect(server.requests.every((r) => r.path === '/v0/index.m3u8' || r.range !== undefined)).toBe(true);
  });

  it('fetches from two redundant hosts at once, each near its share', async () => {
    const stream = made['ts-3']!;
    const rate = 400 * 1024;
    const first = await serve({ root: stream.dir, rate });
    const second = await serve({ root: stream.dir, rate });
    const master = redundantMaster(stream, [first.origin, second.origin]);
    const gateway = await serve({ root: stream.dir, files: { '/redundant.m3u8': master } });
    const started = Date.now();
    const result = await runStitch(['get', `${gateway.origin}/redundant.m3u8`], bed.dir, { timeoutMs: 60_000 });
    const seconds = (Date.now() - started) / 1000;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('from 2 hosts');
    const expected = expectedBytes(stream, 2);
    expect(sha256(saved('redundant.ts'))).toBe(sha256(expected));
    const segmentBytes = (server: StreamServer) =>
      server.requests.filter((r) => r.path.startsWith('/v2/seg')).reduce((sum, r) => sum + r.bytesSent, 0);
    const [a, b] = [segmentBytes(first), segmentBytes(second)];
    expect(Math.min(a, b) / (a + b)).toBeGreaterThan(0.3);
    // One host alone would take size / rate.
    expect(seconds).toBeLessThan((expected.length / rate) * 0.8);
  });

  it('rides out a segment that answers 404 before it appears, and connection resets', async () => {
    const stream = made['ts-3']!;
    const server = await serve({
      root: stream.dir,
      faults: {
        '/v2/seg4.ts': { notFoundTimes: 3 },
        '/v2/seg7.ts': { resetAfterBytes: 50_000, times: 2 },
      },
    });
    const result = await runStitch(['get', `${server.origin}/master.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(saved('master.ts'))).toBe(sha256(expectedBytes(stream, 2)));
    expect(server.requests.filter((r) => r.path === '/v2/seg4.ts' && r.status === 404).length).toBeGreaterThanOrEqual(3);
  });

  it('moves off a host that stalls, to the redundant one', async () => {
    const stream = made['ts-3']!;
    const stalling = await serve({ root: stream.dir, faults: { '/v2/seg5.ts': { stallAfterBytes: 10_000, times: 1000 } } });
    const healthy = await serve({ root: stream.dir });
    const master = redundantMaster(stream, [stalling.origin, healthy.origin]);
    const gateway = await serve({ root: stream.dir, files: { '/redundant.m3u8': master } });
    const result = await runStitch(['get', '--stall-timeout', '2', `${gateway.origin}/redundant.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(sha256(saved('redundant.ts'))).toBe(sha256(expectedBytes(stream, 2)));
  });

  it('resumes after being killed from what it stored, without reading the playlists again', async () => {
    const stream = made['ts-3']!;
    const server = await serve({ root: stream.dir, rate: 600 * 1024 });
    const url = `${server.origin}/master.m3u8`;
    const segmentBytes = () => server.requests.filter((r) => r.path.startsWith('/v2/seg')).reduce((sum, r) => sum + r.bytesSent, 0);
    const first = startStitch(['get', url], bed.dir);
    const deadline = Date.now() + 20_000;
    while (segmentBytes() < 1_600_000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const before = server.requests.length;

    const second = await runStitch(['get', url], bed.dir, { timeoutMs: 60_000 });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('resuming');
    const expected = expectedBytes(stream, 2);
    expect(sha256(saved('master.ts'))).toBe(sha256(expected));
    const rerun = server.requests.slice(before);
    expect(rerun.filter((r) => r.path.endsWith('.m3u8'))).toEqual([]);
    // Not a restart: what was stored before the kill (blocks still in flight are lost) did not come again.
    const rerunBytes = rerun.filter((r) => r.path.startsWith('/v2/seg')).reduce((sum, r) => sum + r.bytesSent, 0);
    expect(rerunBytes).toBeLessThan(expected.length - 200_000);
  });

  it('records a live stream from near its live edge until its playlist ends, exactly its segments in order', async () => {
    const stream = made['ts-3']!;
    const live = slidingPlaylist(stream);
    const server = await serve({ root: stream.dir, files: { '/live.m3u8': live.playlist } });
    const result = await runStitch(['get', `${server.origin}/live.m3u8`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('the stream ended');
    const first = live.firstFetched(server);
    // Three segments before the live edge of the first playlist read.
    expect(first).toBe(live.windowEnds[0]! - 3);
    expect(sha256(saved('live.ts'))).toBe(sha256(Buffer.concat(live.segments.slice(first))));
    expect(probedSeconds(join(bed.dir, 'live.ts'))).toBeGreaterThan(25);
  });

  it('stops recording a live stream at Ctrl-C and keeps the whole segments recorded', async () => {
    const stream = made['ts-3']!;
    const live = slidingPlaylist(stream);
    const server = await serve({ root: stream.dir, files: { '/live.m3u8': live.playlist } });
    const run = startStitch(['get', `${server.origin}/live.m3u8`, '-o', 'show.ts'], bed.dir);
    const deadline = Date.now() + 20_000;
    while (live.published() < 9 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    const file = saved('show.ts');
    const first = live.firstFetched(server);
    // A prefix of whole segments from the first one recorded.
    const count = live.segments
      .slice(first)
      .findIndex((_, n) => Buffer.concat(live.segments.slice(first, first + n + 1)).length === file.length);
    expect(count).toBeGreaterThanOrEqual(3);
    expect(file.equals(Buffer.concat(live.segments.slice(first, first + count + 1)))).toBe(true);
  });

  it('refuses a DRM-protected stream, and YouTube, in plain words', async () => {
    const drm =
      '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key",KEYFORMAT="com.apple.streamingkeydelivery"\n#EXTINF:2,\nseg0.ts\n#EXT-X-ENDLIST\n';
    const server = await serve({ root: made['ts-3']!.dir, files: { '/drm.m3u8': drm } });
    const drmRun = await runStitch(['get', `${server.origin}/drm.m3u8`], bed.dir, { timeoutMs: 30_000 });
    expect(drmRun.code).toBe(1);
    expect(drmRun.stderr).toContain('protected by DRM');
    const youtube = await runStitch(['get', 'https://manifest.googlevideo.com/api/manifest/hls_playlist/index.m3u8'], bed.dir, {
      timeoutMs: 30_000,
    });
    expect(youtube.code).toBe(1);
    expect(youtube.stderr).toContain('googlevideo.com forbids downloading its videos');
    expect(readdirSync(bed.dir)).toEqual([]);
  });
});
