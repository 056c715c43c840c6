/**
 * Issue 47: hostile HLS playlists against the real CLI, items 1 and 4: every URI a playlist names
 * is checked when the plan is made (no local address from a public playlist, no plain http from
 * an https one), and what is refused is named in a bounded line. Each case ends within 30 s,
 * under 256 MiB (hostile-playlists.ts), and the servers see no request the rules refuse. Names
 * under `.public.test` are public hosts on loopback (tests/support/public-names.cjs).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hostileBed, master, media, publicOrigin, segmentRequests, segments } from '../support/hostile-playlists';

const { bed, closers, untouchable, stitch } = hostileBed('stitch-hls-hostile-');

describe('URIs a public playlist names are checked when the plan is made (items 1 and 4)', () => {
  it('refuses a segment on a loopback address, before requesting anything of it', async () => {
    const local = await untouchable();
    const cdn = await bed.serve({ root: bed.dir, files: { ...segments(2), '/i.m3u8': media(['s0.ts', `${local.origin}/s1.ts`]) } });
    const result = await stitch([`${publicOrigin(cdn)}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `stitch: failed: the segment of segment 2 in ${publicOrigin(cdn)}/i.m3u8 is refused: ${local.origin}/s1.ts is on a local or private network address, and the download is not; nothing was requested from it`,
    );
    expect(local.requests).toEqual([]);
    expect(segmentRequests(cdn)).toEqual([]);
    expect(result.seconds).toBeLessThan(5);
  });

  it.each([
    ['key', 'http://10.1.2.3/key.bin', { head: ['#EXT-X-KEY:METHOD=AES-128,URI="http://10.1.2.3/key.bin"'] }],
    [
      'initialization section',
      'http://169.254.169.254/latest/meta-data/',
      { head: ['#EXT-X-MAP:URI="http://169.254.169.254/latest/meta-data/"'] },
    ],
  ])('refuses a %s on a private or link-local address within a second, without connecting', async (what, uri, options) => {
    const cdn = await bed.serve({ root: bed.dir, files: { ...segments(2), '/i.m3u8': media(['s0.ts', 's1.ts'], options) } });
    const result = await stitch([`${publicOrigin(cdn)}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the ${what} of segment 1 in ${publicOrigin(cdn)}/i.m3u8 is refused: ${uri} is on a local`);
    expect(segmentRequests(cdn)).toEqual([]);
    expect(result.seconds).toBeLessThan(5);
  });

  it('leaves out a variant on 192.168.1.1 and one on loopback, with a notice, and downloads the one left', async () => {
    const local = await untouchable();
    const files = segments(2);
    const top = master([
      { uri: 'http://192.168.1.1/best.m3u8', bandwidth: 9_000_000 },
      { uri: `${local.origin}/v.m3u8`, bandwidth: 5_000_000 },
      { uri: 'v.m3u8', bandwidth: 1_000_000 },
    ]);
    const server = await bed.serve({ root: bed.dir, files: { ...files, '/v.m3u8': media(['s0.ts', 's1.ts']), '/master.m3u8': top } });
    const result = await stitch([`${publicOrigin(server, 'www')}/master.m3u8`, '-o', 'out.ts']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      `stitch: left out what ${publicOrigin(server, 'www')}/master.m3u8 names that may not be requested: http://192.168.1.1/best.m3u8 is on a local or private network address, and the download is not (and 1 more)`,
    );
    expect(local.requests).toEqual([]);
    expect(server.requests.map((r) => r.path)).toContain('/s1.ts');
    expect(await readFile(join(bed.dir, 'out.ts'))).toEqual(Buffer.concat([files['/s0.ts']!, files['/s1.ts']!]));
  });

  it('refuses a master whose every variant is local, naming why', async () => {
    const local = await untouchable();
    const server = await bed.serve({ root: bed.dir, files: { '/master.m3u8': master([{ uri: `${local.origin}/v.m3u8`, bandwidth: 1 }]) } });
    const result = await stitch([`${publicOrigin(server)}/master.m3u8`, '-o', 'out.ts']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/stitch: failed: left out .* is on a local or private network address.*; no variant is left to download/);
    expect(local.requests).toEqual([]);
  });

  it('leaves out a redundant host on loopback and a variant whose EXT-X-MEDIA is local', async () => {
    const local = await untouchable();
    const files = segments(2);
    const top = master(
      [
        { uri: 'v.m3u8', bandwidth: 9_000_000, extra: ',SUBTITLES="subs"' },
        { uri: `${local.origin}/v.m3u8`, bandwidth: 1_000_000 },
        { uri: 'v.m3u8', bandwidth: 1_000_000 },
      ],
      [`#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="en",URI="${local.origin}/subs.m3u8"`],
    );
    const withMaster = await bed.serve({ root: bed.dir, files: { ...files, '/v.m3u8': media(['s0.ts', 's1.ts']), '/m.m3u8': top } });
    const saved = await stitch([`${publicOrigin(withMaster)}/m.m3u8`, '-o', 'out.ts']);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stderr).toContain(`${local.origin}/subs.m3u8 is on a local or private network address`);
    expect(saved.stderr).toContain('(and 1 more)');
    expect(local.requests).toEqual([]);
    expect(await readFile(join(bed.dir, 'out.ts'))).toEqual(Buffer.concat([files['/s0.ts']!, files['/s1.ts']!]));
  });

  it('lets a playlist on a local address name other local addresses (a home server)', async () => {
    const files = segments(2);
    const segmentHost = await bed.serve({ root: bed.dir, files });
    const server = await bed.serve({
      root: bed.dir,
      files: { '/i.m3u8': media([`${segmentHost.origin}/s0.ts`, `${segmentHost.origin}/s1.ts`]) },
    });
    const result = await stitch([`${server.origin}/i.m3u8`, '-o', 'out.ts']);
    expect(result.code, result.stderr).toBe(0);
    expect(await readFile(join(bed.dir, 'out.ts'))).toEqual(Buffer.concat([files['/s0.ts']!, files['/s1.ts']!]));
  });

  describe('an https playlist', () => {
    const pem = (name: string) => readFileSync(fileURLToPath(new URL(`../support/tls/loopback.${name}.pem`, import.meta.url)), 'utf8');

    /** An https server of one playlist on 127.0.0.1 (the test certificate's name). */
    async function securePlaylist(text: string): Promise<string> {
      process.env.NODE_EXTRA_CA_CERTS = fileURLToPath(new URL('../support/tls/loopback.cert.pem', import.meta.url));
      const server = createHttpsServer({ key: pem('key'), cert: pem('cert') }, (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/vnd.apple.mpegurl' }).end(text);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      closers.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
      return `https://127.0.0.1:${(server.address() as AddressInfo).port}/i.m3u8`;
    }

    it('cannot name plain-http segments', async () => {
      const plain = await untouchable();
      const url = await securePlaylist(media([`${plain.origin}/s0.ts`]));
      const result = await stitch([url, '-o', 'out.ts']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${plain.origin}/s0.ts is plain http and the download is https`);
      expect(plain.requests).toEqual([]);
    });

    it('cannot name a plain-http key', async () => {
      const plain = await untouchable();
      const url = await securePlaylist(media(['s0.ts'], { head: [`#EXT-X-KEY:METHOD=AES-128,URI="${plain.origin}/k.key"`] }));
      const result = await stitch([url, '-o', 'out.ts']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`the key of segment 1 in ${url} is refused: ${plain.origin}/k.key is plain http`);
      expect(plain.requests).toEqual([]);
    });
  });
});

describe('output a hostile playlist cannot flood', () => {
  it('prints one short line with -q, and a bounded few without it', async () => {
    const long = `${'x'.repeat(1_000_000)}.ts`;
    const bad = Array.from({ length: 12 }, (_, i) => ({ uri: `http://10.0.0.${i}/${long}`, bandwidth: 1_000 + i }));
    const files = { ...segments(1), '/v.m3u8': media(['s0.ts']) };
    const server = await bed.serve({
      root: bed.dir,
      files: { ...files, '/bad.m3u8': master(bad), '/some.m3u8': master([...bad, { uri: 'v.m3u8', bandwidth: 1 }]) },
    });
    const refused = await stitch([`${publicOrigin(server)}/bad.m3u8`, '-o', 'out.ts', '-q']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^stitch: failed: left out what .* \(and 11 more\); no variant is left to download\n$/);
    expect(refused.stderr.length).toBeLessThan(1_000);
    const quiet = await stitch([`${publicOrigin(server)}/some.m3u8`, '-o', 'quiet.ts', '-q']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
    const loud = await stitch([`${publicOrigin(server)}/some.m3u8`, '-o', 'loud.ts']);
    expect(loud.code, loud.stderr).toBe(0);
    expect(loud.stderr.length).toBeLessThan(2_000);
  });
});
