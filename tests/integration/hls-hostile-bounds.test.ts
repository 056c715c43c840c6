/**
 * Issue 47, item 5 (HLS) and item 8: every count, size and rate a playlist or a server gives the
 * CLI is bounded, and going past a bound is a plain error within seconds; the live recorder reads
 * a playlist at most once a second, holds no segment over 64 MiB and writes through no planted
 * link. Each case ends within 30 s, under 256 MiB (hostile-playlists.ts).
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { lstat, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startStitch, type CliResult } from '../support/cli';
import { sendForever } from '../support/hostile-server';
import { CASE_MS, hostileBed, master, media, MiB, mostAtOnce, publicOrigin, segmentRequests, segments } from '../support/hostile-playlists';

const { bed, hostile, untouchable, stitch } = hostileBed('stitch-hls-bounds-');

describe('bounds on what a playlist or a server asks (item 5)', () => {
  it('refuses a playlist of 1,000,000 segments at once, probing none', async () => {
    const text = `#EXTM3U\n#EXT-X-TARGETDURATION:1\n${'#EXTINF:1,\na\n'.repeat(1_000_000)}#EXT-X-ENDLIST\n`;
    const server = await bed.serve({ root: bed.dir, files: { '/i.m3u8': text } });
    const result = await stitch([`${publicOrigin(server)}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the playlist ${publicOrigin(server)}/i.m3u8 has more than 30000 segments, the most Stitch reads`);
    expect(server.requests).toHaveLength(1);
    expect(result.seconds).toBeLessThan(5);
  });

  it('stops probing at the first segment that keeps failing (before: one probe per segment, five times each)', async () => {
    const uris = Array.from({ length: 5_000 }, (_, i) => `gone${i}.ts`);
    const server = await bed.serve({ root: bed.dir, files: { '/i.m3u8': media(uris) } });
    const result = await stitch([`${publicOrigin(server)}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/stitch: failed: segment \d+ of 5000 \(.*gone\d+\.ts\) answered 404/);
    // Six probes at once, five attempts each, and none started after the first failure.
    expect(segmentRequests(server).length).toBeLessThanOrEqual(6 * 5 + 6);
  });

  it('refuses a master of 400 redundant hosts at once; of 200, uses the first four', async () => {
    const files = segments(4);
    const many = (n: number) => master(Array.from({ length: n }, (_, i) => ({ uri: `h${i}/v.m3u8`, bandwidth: 1_000_000 })));
    const hostFiles = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [`/h${i}/v.m3u8`, media(['s0.ts', 's1.ts', 's2.ts', 's3.ts'].map((s) => `/${s}`))]),
    );
    const server = await bed.serve({ root: bed.dir, files: { ...files, ...hostFiles, '/400.m3u8': many(400), '/200.m3u8': many(200) } });
    const refused = await stitch([`${publicOrigin(server)}/400.m3u8`, '-o', 'out.ts']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('lists 400 variants and hosts, more than the 256 Stitch reads');
    expect(server.requests).toHaveLength(1);

    server.requests.length = 0;
    const saved = await stitch([`${publicOrigin(server)}/200.m3u8`, '-o', 'out.ts']);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stderr).toContain('the variant is on 200 hosts: the first 4 are used');
    expect(server.requests.filter((r) => r.path.endsWith('/v.m3u8'))).toHaveLength(4);
    // One server behind the four "hosts": six probes at once, then the engine's own connections.
    expect(server.peakConnections).toBeLessThanOrEqual(12);
  });

  it('refuses 4,000 distinct keys without fetching one, and fetches 300 at most six at once', async () => {
    const keyServer = await bed.serve({
      root: bed.dir,
      latencyMs: 30,
      files: Object.fromEntries(Array.from({ length: 4_000 }, (_, i) => [`/k${i}.key`, new Uint8Array(16).fill(i % 256)])),
    });
    const plain = Array.from({ length: 300 }, () => randomBytes(100));
    const encrypted = plain.map((bytes, i) => {
      const cipher = createCipheriv('aes-128-cbc', new Uint8Array(16).fill(i % 256), new Uint8Array(16));
      return Buffer.concat([cipher.update(bytes), cipher.final()]);
    });
    const keyed = (n: number) => {
      const lines = ['#EXTM3U', '#EXT-X-TARGETDURATION:2'];
      for (let i = 0; i < n; i++) {
        lines.push(`#EXT-X-KEY:METHOD=AES-128,URI="${publicOrigin(keyServer, 'keys')}/k${i}.key",IV=0x${'0'.repeat(32)}`);
        lines.push('#EXTINF:2,', `e${i % 300}.ts`);
      }
      return `${lines.join('\n')}\n#EXT-X-ENDLIST\n`;
    };
    const files = Object.fromEntries(encrypted.map((bytes, i) => [`/e${i}.ts`, bytes]));
    const server = await bed.serve({ root: bed.dir, files: { ...files, '/4000.m3u8': keyed(4_000), '/300.m3u8': keyed(300) } });
    const refused = await stitch([`${publicOrigin(server)}/4000.m3u8`, '-o', 'out.ts']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('names 4000 keys, more than the 2000 Stitch fetches for one stream');
    expect(keyServer.requests).toEqual([]);

    const saved = await stitch([`${publicOrigin(server)}/300.m3u8`, '-o', 'out.ts']);
    expect(saved.code, saved.stderr).toBe(0);
    expect(await readFile(join(bed.dir, 'out.ts'))).toEqual(Buffer.concat(plain));
    expect(keyServer.requests).toHaveLength(300);
    expect(mostAtOnce(keyServer)).toBeLessThanOrEqual(6);
  });

  it('refuses an EXT-X-BYTERANGE of 10^15 bytes for 2 s before any segment request', async () => {
    const server = await bed.serve({
      root: bed.dir,
      files: { ...segments(1), '/i.m3u8': media(['s0.ts'], { each: ['#EXT-X-BYTERANGE:1000000000000000@0'] }) },
    });
    const result = await stitch([`${publicOrigin(server)}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('has 1000000000000000 bytes, more than a 2 s segment can have (250 MB, at 1 Gbit/s)');
    expect(segmentRequests(server)).toEqual([]);
  });

  it('refuses a Content-Range total of 10^15 bytes for a 2 s segment after its probe', async () => {
    const server = await hostile((req, res) => {
      if (req.url === '/i.m3u8') return void res.end(media(['s0.ts', 's1.ts']));
      res.writeHead(206, { 'Content-Range': 'bytes 0-0/1000000000000000', 'Content-Length': '1' }).end('x');
    });
    const result = await stitch([`${publicOrigin(server)}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/segment \d of 2 \(.*s\d\.ts\) has 1000000000000000 bytes, more than a 2 s segment can have/);
    expect(server.requests.length).toBeLessThanOrEqual(3);
    expect(await readdir(bed.dir)).not.toContain('out.ts');
  });

  it('fails within seconds when a segment changes size after the plan (before: 44,000 requests in 30 s, 100 %)', async () => {
    const body = randomBytes(200_000);
    let probed = 0;
    const server = await hostile((req, res) => {
      if (req.url === '/i.m3u8') return void res.end(media(['s0.ts']));
      // The probe sees 200,000 bytes; every later request a file of 100,000.
      const size = probed++ === 0 ? body.length : 100_000;
      const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
      const start = Number(range?.[1] ?? 0);
      const end = Math.min(size, range?.[2] ? Number(range[2]) + 1 : size);
      if (start >= size) return void res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
      res
        .writeHead(206, { 'Content-Range': `bytes ${start}-${end - 1}/${size}`, 'Content-Length': end - start })
        .end(body.subarray(start, end));
    });
    const result = await stitch([`${publicOrigin(server)}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the stream changed since it was planned; download it again');
    expect(result.stderr).not.toContain('100 %');
    expect(server.requests.length).toBeLessThan(20);
    expect(result.seconds).toBeLessThan(10);
  });
});

describe('the live recorder (items 5 and 8)', () => {
  /** Starts a recording of `url`, stops it (SIGINT) after `ms`, and waits for the CLI to save. */
  async function record(url: string, ms: number, extra: string[] = []): Promise<CliResult> {
    const { child, done } = startStitch(['get', url, '-o', 'rec.ts', ...extra], bed.dir, { timeoutMs: CASE_MS, publicNames: true });
    const timer = setTimeout(() => child.kill('SIGINT'), ms);
    const result = await done;
    clearTimeout(timer);
    expect(result.timedOut).toBe(false);
    expect(result.peakRssBytes).toBeLessThan(256 * MiB);
    return result;
  }

  it('reads a playlist of TARGETDURATION:0 again at most once a second (before: 109 times)', async () => {
    const server = await bed.serve({
      root: bed.dir,
      files: { ...segments(3), '/live.m3u8': media(['s0.ts', 's1.ts', 's2.ts'], { live: true, target: 0 }) },
    });
    const result = await record(`${publicOrigin(server)}/live.m3u8`, 3_000);
    expect(result.code, result.stderr).toBe(0);
    // The first read, then one a second at most.
    expect(server.requests.filter((r) => r.path === '/live.m3u8').length).toBeLessThanOrEqual(5);
  });

  it('ends a recording whose playlist, read again, names a loopback segment: nothing is asked of it', async () => {
    const local = await untouchable();
    let reads = 0;
    const playlist = () => media(reads++ < 2 ? ['s0.ts'] : ['s0.ts', `${local.origin}/s1.ts`], { live: true, target: 1 });
    const server = await bed.serve({ root: bed.dir, files: { ...segments(1), '/live.m3u8': playlist } });
    // Read to plan, then to record; the third read names the local segment.
    const result = await record(`${publicOrigin(server)}/live.m3u8`, 20_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${local.origin}/s1.ts is on a local or private network address`);
    expect(result.stderr).toContain('saved');
    expect(local.requests).toEqual([]);
  });

  it('refuses a live segment over 64 MiB without holding it (a body that never ends)', async () => {
    const server = await hostile((req, res) => {
      if (req.url === '/live.m3u8') return void res.end(media(['huge.ts'], { live: true }));
      res.writeHead(200, { 'Content-Type': 'video/mp2t' });
      sendForever(res, new Uint8Array(256 * 1024));
    });
    const result = await record(`${publicOrigin(server)}/live.m3u8`, 25_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('huge.ts is larger than 64 MiB, the most a live segment may be');
    expect(await readdir(bed.dir)).toEqual([]);
  });

  it('does not write through a planted .stitch-live link', async () => {
    const victim = join(bed.dir, 'victim.txt');
    await writeFile(victim, 'keep me');
    await symlink(victim, join(bed.dir, 'rec.ts.stitch-live'));
    const server = await bed.serve({ root: bed.dir, files: { ...segments(1), '/live.m3u8': media(['s0.ts'], { live: true }) } });
    const result = await record(`${publicOrigin(server)}/live.m3u8`, 5_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('rec.ts.stitch-live is a symbolic link, which Stitch did not make: remove it and try again');
    expect(await readFile(victim, 'utf8')).toBe('keep me');
    expect((await lstat(join(bed.dir, 'rec.ts.stitch-live'))).isSymbolicLink()).toBe(true);
    expect(server.requests.filter((r) => r.path === '/s0.ts')).toEqual([]);
  });
});
