/**
 * The CLI against hostile servers and planted files: each case ends within seconds, under
 * 200 MB of memory, with the exact file or a clear message, and creates nothing outside its folder.
 */
import { createHash } from 'node:crypto';
import { link, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runStitch, startStitch, type CliResult } from '../support/cli';
import { contentSha256 } from '../support/content';
import { metalinkXml } from '../support/metalink-doc';
import { sendForever, startHostile, type HostileServer } from '../support/hostile-server';
import { startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';

const MB = 1e6;
/** The test's own folder: `dir` (where the CLI runs) and a sibling the CLI must never touch. */
let root: string;
let dir: string;
let outside: string;
let servers: Array<HostileServer | Mirror> = [];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'stitch-hostile-'));
  dir = join(root, 'work');
  outside = join(root, 'outside');
  await mkdir(dir);
  await mkdir(outside);
});
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
  await rm(root, { recursive: true, force: true });
});

async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  servers.push(m);
  return m;
}

const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function hostile(handler: Parameters<typeof startHostile>[0]): Promise<HostileServer> {
  const server = await startHostile(handler);
  servers.push(server);
  return server;
}

/** Runs the CLI in `dir`, killed after 15 s; it must have ended by itself within 200 MB. */
async function stitch(args: string[]): Promise<CliResult> {
  const result = await runStitch(args, dir, { timeoutMs: 15_000 });
  expect(result.timedOut, 'the CLI had to be killed after 15 s').toBe(false);
  expect(result.peakRssBytes).toBeLessThan(200 * MB);
  expect(await readdir(outside)).toEqual([]);
  return result;
}

describe('stitch get against hostile servers', () => {
  it('cuts an endless Metalink body (chunked, no length) at 4 MiB', async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/metalink4+xml' });
      res.write('<?xml version="1.0"?><metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="a.bin">');
      sendForever(res, '<url>http://127.0.0.1:9/a.bin</url>'.repeat(2000));
    });
    const result = await stitch(['get', `${server.origin}/endless.meta4`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`stitch: the Metalink file ${server.origin}/endless.meta4 is larger than 4.19 MB`);
    expect(await readdir(dir)).toEqual([]);
  });

  it.each<[string, () => Promise<string>, RegExp]>([
    ['refused', async () => `http://127.0.0.1:${await closedPort()}/f.bin`, /last: the connection was refused \(connect ECONNREFUSED/],
    [
      'reset before the headers',
      async () => (await hostile((req) => req.socket.destroy())).origin + '/f.bin',
      // The CLI's fetch (node:http) reports a reset; Node's own fetch, a closed connection.
      /last: (the connection was reset \(socket hang up\)|the server closed the connection \(other side closed\))/,
    ],
    ['not in the DNS', async () => 'http://stitch-test.invalid/f.bin', /last: the host name could not be resolved \(DNS\)/],
    ['silent', async () => (await hostile(() => {})).origin + '/f.bin', /last: no answer within 1\.0 s/],
  ])('says what happened when the connection is %s', async (_, url, message) => {
    const result = await stitch(['get', await url(), '--retries', '2', '--stall-timeout', '1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toContain('Symbol');
  });

  it("ignores a Content-Disposition of 16,000 dots (the most Node takes) and saves under the URL's name", async () => {
    const m = await mirror({
      size: 100_000,
      seed: 89,
      path: '/plain.bin',
      extraHeaders: { 'Content-Disposition': `attachment; filename="a${'.'.repeat(16_000)}b.exe"` },
    });
    const result = await stitch(['get', m.url]);
    expect(result.code, result.stderr).toBe(0);
    expect(await readdir(dir)).toEqual(['plain.bin']);
    expect(await sha256(join(dir, 'plain.bin'))).toBe(await contentSha256(89, 100_000));
  });

  it('uses at most 32 of the 3,000 URLs of a Metalink file', async () => {
    const dead = await hostile((_req, res) => void res.writeHead(404).end());
    const m = await mirror({ size: 2_000_000, seed: 88, rate: 2_000_000 });
    const urls = [m.url, ...Array.from({ length: 3000 }, (_, i) => `${dead.origin}/m${i}/f.bin`)];
    await writeFile(join(dir, 'f.meta4'), metalinkXml([{ name: 'f.bin', size: 2_000_000, urls }]));
    const result = await stitch(['get', 'f.meta4']);
    expect(result.code, result.stderr).toBe(0);
    expect(await sha256(join(dir, 'f.bin'))).toBe(await contentSha256(88, 2_000_000));
    expect(new Set(dead.requests).size).toBeLessThanOrEqual(31);
  });

  it('saves to -o a:b.bin, keeping its partial files under a name safe on every OS', async () => {
    const m = await mirror({ size: 100_000, seed: 81 });
    const result = await stitch(['get', m.url, '-o', 'a:b.bin']);
    expect(result.code, result.stderr).toBe(0);
    expect(await readdir(dir)).toEqual(['a:b.bin']);
    expect(await sha256(join(dir, 'a:b.bin'))).toBe(await contentSha256(81, 100_000));
  });

  it('after a digest mismatch says the bytes were discarded, and nothing else about them', async () => {
    const m = await mirror({ size: 100_000, seed: 82 });
    const result = await stitch(['get', m.url, '-o', 'f.bin', '--checksum', `sha-256=${'0'.repeat(64)}`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the downloaded bytes were discarded and nothing was saved');
    expect(result.stderr).not.toContain('kept');
    expect(result.stderr).toMatch(/stitch: run the same command again to retry\n$/);
  });

  it('keeps the bytes a failed download received, and says so', async () => {
    const m = await mirror({ size: 8_000_000, seed: 83, rate: 2_000_000 });
    const run = startStitch(['get', m.url, '-o', 'f.bin'], dir, { timeoutMs: 15_000 });
    while (m.stats.bytesSent < 1_500_000) await new Promise((resolve) => setTimeout(resolve, 20));
    m.setFaults({ errorStatus: { status: 404 } });
    m.dropConnections();
    const result = await run.done;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /stitch: failed: .*404.*\nstitch: the [\d.]+ MB received are kept; run the same command again to retry\n$/,
    );
  });
});

describe('stitch get FILE.meta4 with hostile names', () => {
  it('saves every file under its sanitized name inside the folder', async () => {
    const m = await mirror({ size: 50_000, seed: 87 });
    const long = `${'n'.repeat(300)}.bin`;
    const names = ['.ssh/authorized_keys', '.profile', 'CON', 'sub/trail. ', 'bidi\u202egpj.exe', long];
    await writeFile(join(dir, 'f.meta4'), metalinkXml(names.map((name) => ({ name, urls: [m.url] }))));
    const result = await stitch(['get', 'f.meta4']);
    expect(result.code, result.stderr).toBe(0);
    const saved = ['ssh/authorized_keys', 'profile', '_CON', 'sub/trail', 'bidigpj.exe', `${'n'.repeat(196)}.bin`];
    const sha = await contentSha256(87, 50_000);
    for (const name of saved) expect(await sha256(join(dir, name)), name).toBe(sha);
    expect((await readdir(dir)).sort()).toEqual(
      ['_CON', 'bidigpj.exe', 'f.meta4', 'profile', 'ssh', 'sub', `${'n'.repeat(196)}.bin`].sort(),
    );
  });
});

describe('stitch get with links planted in the output folder', () => {
  const precious = 'precious\n';

  it.each([
    [
      'a symbolic link',
      'out.bin.stitch-part',
      /out\.bin\.stitch-part is a symbolic link, which Stitch did not make: remove it and try again/,
    ],
    [
      'a symbolic link',
      'out.bin.stitch-state',
      /out\.bin\.stitch-state is a symbolic link, which Stitch did not make: remove it and try again/,
    ],
    ['a hard link', 'out.bin.stitch-part', /out\.bin\.stitch-part has other names \(a hard link\), which Stitch did not make/],
    ['a hard link', 'out.bin.stitch-state', /out\.bin\.stitch-state has other names \(a hard link\), which Stitch did not make/],
  ])('never writes through %s named %s', async (kind, name, message) => {
    const target = join(outside, 'target');
    await writeFile(target, precious);
    if (kind === 'a hard link') await link(target, join(dir, name));
    else await symlink(target, join(dir, name));
    const m = await mirror({ size: 3_000_000, seed: 84 });
    const result = await runStitch(['get', m.url, '-o', 'out.bin'], dir, { timeoutMs: 15_000 });
    expect(result.timedOut).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(await readFile(target, 'utf8')).toBe(precious);
    expect(await readdir(outside)).toEqual(['target']);
    await expect(lstat(join(dir, 'out.bin'))).rejects.toThrow(/ENOENT/);
  });

  it("saves beside a dangling link that has the file's name instead of replacing it", async () => {
    await symlink(join(outside, 'new'), join(dir, 'data.bin'));
    const m = await mirror({ size: 100_000, seed: 85, filename: 'data.bin' });
    const result = await stitch(['get', m.url]);
    expect(result.code, result.stderr).toBe(0);
    expect((await lstat(join(dir, 'data.bin'))).isSymbolicLink()).toBe(true);
    expect(await sha256(join(dir, 'data (1).bin'))).toBe(await contentSha256(85, 100_000));
  });

  it('refuses a Metalink path through a linked folder', async () => {
    await symlink(outside, join(dir, 'sub'));
    const m = await mirror({ size: 100_000, seed: 86 });
    await writeFile(join(dir, 'f.meta4'), metalinkXml([{ name: 'sub/f.bin', urls: [m.url] }]));
    const result = await stitch(['get', 'f.meta4']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/sub is a link or a file, not a folder: the Metalink file's sub\/f\.bin cannot go there/);
    expect(m.stats.requests).toHaveLength(0);
  });
});
