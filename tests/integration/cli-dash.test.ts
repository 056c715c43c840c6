import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runStitch } from '../support/cli';
import { streamTestBed } from '../support/stream-server';
import { DASH, DASH_SINGLE_FILE, dashTrackBytes, packets, probedSeconds, stream, type MadeStream } from '../support/streams';

// Issue 30: `stitch get MANIFEST.mpd` saves a DASH stream, picture and sound in separate
// representations, as one MP4 holding both: every packet of both tracks as ffmpeg's own files
// carry them (compared packet by packet by ffmpeg, not through the code under test).
const made: Record<string, MadeStream> = {};
const bed = streamTestBed('stitch-dash-');
const serve = bed.serve;

beforeAll(async () => {
  for (const recipe of [DASH, DASH_SINGLE_FILE]) made[recipe.name] = await stream(recipe);
}, 180_000);

/** Representation `id` of `made` as ffmpeg wrote it, joined into a file of its own. */
async function track(stream: MadeStream, id: number): Promise<string> {
  const path = join(bed.dir, `track${id}.mp4`);
  writeFileSync(path, dashTrackBytes(stream, id));
  return path;
}

async function expectSameMedia(saved: string, stream: MadeStream, picture: number, sound: number): Promise<void> {
  expect(packets(saved, '0:v')).toEqual(packets(await track(stream, picture), '0:v'));
  expect(packets(saved, '0:a')).toEqual(packets(await track(stream, sound), '0:a'));
  expect(probedSeconds(saved)).toBeGreaterThan(stream.durationSeconds - 1);
}

describe('stitch get on a DASH stream', () => {
  it('joins the best picture and the sound into one MP4 with every packet of both, asking only their segments', async () => {
    const stream = made.dash!;
    const server = await serve({ root: stream.dir });
    const result = await runStitch(['get', `${server.origin}/manifest.mpd`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('a DASH stream: 640×360');
    expect(await readdir(bed.dir)).toEqual(['manifest.mp4']);
    // Representation 1 is the 640×360 picture, 2 the sound.
    await expectSameMedia(join(bed.dir, 'manifest.mp4'), stream, 1, 2);
    expect(server.requests.filter((r) => /stream0/.test(r.path))).toEqual([]);
  });

  it('joins representations whose segments are byte ranges of one file each (SegmentList)', async () => {
    const stream = made['dash-single-file']!;
    const server = await serve({ root: stream.dir });
    const result = await runStitch(['get', `${server.origin}/manifest.mpd`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    await expectSameMedia(join(bed.dir, 'manifest.mp4'), stream, 0, 1);
  });

  it('reads the segments of a representation indexed by its sidx (SegmentBase, one file each, as on-demand DASH has it)', async () => {
    const stream = made.dash!;
    // Each track remuxed by ffmpeg into one fragmented file with one index of its fragments at the front.
    const root = join(bed.dir, 'on-demand');
    mkdirSync(root);
    const ranges: string[] = [];
    for (const [id, name] of [
      [1, 'picture.mp4'],
      [2, 'sound.mp4'],
    ] as const) {
      const remux = spawnSync('ffmpeg', [
        ...['-v', 'error', '-i', await track(stream, id), '-c', 'copy', '-frag_duration', '2000000'],
        ...['-movflags', 'empty_moov+default_base_moof+global_sidx', '-f', 'mp4', join(root, name)],
      ]);
      expect(remux.status, String(remux.stderr)).toBe(0);
      const boxes = topBoxes(readFileSync(join(root, name)));
      const sidx = boxes.find((b) => b.type === 'sidx')!;
      ranges.push(`<SegmentBase indexRange="${sidx.start}-${sidx.end - 1}"><Initialization range="0-${sidx.start - 1}"/></SegmentBase>`);
    }
    const manifest = `<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT30S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">
  <Period>
    <AdaptationSet contentType="video" mimeType="video/mp4"><Representation id="v" bandwidth="500000" width="640" height="360" codecs="avc1.64001e"><BaseURL>picture.mp4</BaseURL>${ranges[0]}</Representation></AdaptationSet>
    <AdaptationSet contentType="audio" mimeType="audio/mp4"><Representation id="a" bandwidth="69000" codecs="mp4a.40.2"><BaseURL>sound.mp4</BaseURL>${ranges[1]}</Representation></AdaptationSet>
  </Period>
</MPD>`;
    const server = await serve({ root, files: { '/show.mpd': manifest } });
    const out = join(bed.dir, 'out');
    mkdirSync(out);
    const result = await runStitch(['get', `${server.origin}/show.mpd`], out, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(packets(join(out, 'show.mp4'), '0:v')).toEqual(packets(join(root, 'picture.mp4'), '0:v'));
    expect(packets(join(out, 'show.mp4'), '0:a')).toEqual(packets(join(root, 'sound.mp4'), '0:a'));
  });

  it('resumes across resets mid-segment and still joins every packet', async () => {
    const stream = made.dash!;
    // A picture segment's download is cut (its probe, the first response, is shorter); a sound segment's probe is.
    const faults = {
      '/chunk-stream1-00002.m4s': { resetAfterBytes: 20_000, times: 2 },
      '/chunk-stream2-00003.m4s': { resetAfterBytes: 5_000 },
    };
    const server = await serve({ root: stream.dir, faults });
    const result = await runStitch(['get', `${server.origin}/manifest.mpd`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const picture = server.requests.filter((r) => r.path === '/chunk-stream1-00002.m4s' && r.range !== 'bytes=0-8191');
    expect(picture.length).toBeGreaterThanOrEqual(2);
    expect(picture[0]!.bytesSent).toBe(20_000);
    await expectSameMedia(join(bed.dir, 'manifest.mp4'), stream, 1, 2);
  });

  it('refuses a stream protected by DRM, in words, saving nothing', async () => {
    const stream = made.dash!;
    const manifest = (await readFile(join(stream.dir, 'manifest.mpd'), 'utf8')).replace(
      '<Representation id="1"',
      '<ContentProtection schemeIdUri="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"/><Representation id="1"',
    );
    const server = await serve({ root: stream.dir, files: { '/manifest.mpd': manifest } });
    const result = await runStitch(['get', `${server.origin}/manifest.mpd`], bed.dir, { timeoutMs: 60_000 });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('protected by DRM');
    expect(await readdir(bed.dir)).toEqual([]);
  });
});

/** A file's top-level MP4 boxes (32-bit sizes, as ffmpeg writes these). */
function topBoxes(bytes: Buffer): { type: string; start: number; end: number }[] {
  const boxes = [];
  for (let at = 0; at + 8 <= bytes.length;) {
    const end = at + bytes.readUInt32BE(at);
    boxes.push({ type: bytes.toString('latin1', at + 4, at + 8), start: at, end });
    at = end;
  }
  return boxes;
}
