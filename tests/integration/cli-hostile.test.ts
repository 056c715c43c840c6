/**
 * The CLI against hostile servers and planted files: each case ends within seconds, under
 * 200 MB of memory, with the exact file or a clear message, and creates nothing outside its folder.
 */
import { createHash } from 'node:crypto';
import { link, lstat, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
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
    expect(await sha256(join(dir, 'f', 'f.bin'))).toBe(await contentSha256(88, 2_000_000));
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
  it("saves every file under its sanitized name inside the Metalink's folder", async () => {
    const m = await mirror({ size: 50_000, seed: 87 });
    const long = `${'n'.repeat(300)}.bin`;
    const names = ['.ssh/authorized_keys', '.profile', 'CON', 'sub/trail. ', 'bidi\u202egpj.exe', long];
    await writeFile(join(dir, 'f.meta4'), metalinkXml(names.map((name) => ({ name, urls: [m.url] }))));
    const result = await stitch(['get', 'f.meta4']);
    expect(result.code, result.stderr).toBe(0);
    const saved = ['ssh/authorized_keys', 'profile', '_CON', 'sub/trail', 'bidigpj.exe', `${'n'.repeat(196)}.bin`];
    const sha = await contentSha256(87, 50_000);
    for (const name of saved) expect(await sha256(join(dir, 'f', name)), name).toBe(sha);
    expect((await readdir(dir)).sort()).toEqual(['f', 'f.meta4']);
    expect((await readdir(join(dir, 'f'))).sort()).toEqual(
      ['.stitch-metalink', '_CON', 'bidigpj.exe', 'profile', 'ssh', 'sub', `${'n'.repeat(196)}.bin`].sort(),
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

  it.each<[string, string[], () => Promise<string>]>([
    ['-d DIR', ['-d', 'home'], async () => join(dir, 'home')],
    [
      'the folder an earlier run made for the Metalink',
      [],
      async () => {
        await mkdir(join(dir, 'f'));
        await writeFile(join(dir, 'f', '.stitch-metalink'), `${join(await realpath(dir), 'f.meta4')}\n`);
        return join(dir, 'f');
      },
    ],
  ])('refuses a Metalink path through a linked folder in %s', async (_, options, folder) => {
    const base = await folder();
    await mkdir(base, { recursive: true });
    await symlink(outside, join(base, 'sub'));
    const m = await mirror({ size: 100_000, seed: 86 });
    await writeFile(join(dir, 'f.meta4'), metalinkXml([{ name: 'sub/f.bin', urls: [m.url] }]));
    const result = await stitch(['get', 'f.meta4', ...options]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/sub is a link or a file, not a folder: the Metalink file's sub\/f\.bin cannot go there/);
    expect(m.stats.requests).toHaveLength(0);
  });
});

describe("stitch get FILE.meta4 saves into a folder of the Metalink's own", () => {
  /** Folders whose files macOS and Windows run at login: already in the working folder, they must stay empty. */
  const launchAgents = 'Library/LaunchAgents';
  const startup = 'AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup';
  const size = 50_000;
  const seed = 90;

  beforeEach(async () => {
    for (const folder of [launchAgents, startup]) await mkdir(join(dir, folder), { recursive: true });
  });

  async function expectLoginFoldersEmpty(): Promise<void> {
    for (const folder of [launchAgents, startup]) expect(await readdir(join(dir, folder)), folder).toEqual([]);
  }

  /** `update.meta4` in the working folder, naming one file served by a loopback mirror. */
  async function updateMetalink(name: string, bytes = size, rate?: number): Promise<Mirror> {
    const m = await mirror({ size: bytes, seed, rate });
    const sha256 = await contentSha256(seed, bytes);
    await writeFile(join(dir, 'update.meta4'), metalinkXml([{ name, size: bytes, sha256, urls: [m.url] }]));
    return m;
  }

  async function expectSaved(path: string, bytes = size): Promise<void> {
    expect(await sha256(join(dir, path))).toBe(await contentSha256(seed, bytes));
  }

  const saving = (folder: string) => `stitch: saving the Metalink's files in ${folder}\n`;

  it.each([`${launchAgents}/com.update.plist`, `${startup}/update.bat`])(
    'saves %s in ./update/, not in the folder of that name already here',
    async (name) => {
      await updateMetalink(name);
      const result = await stitch(['get', 'update.meta4']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(saving('./update/'));
      await expectSaved(`update/${name}`);
      await expectLoginFoldersEmpty();
      expect(await readFile(join(dir, 'update', '.stitch-metalink'), 'utf8')).toBe(`${join(await realpath(dir), 'update.meta4')}\n`);
    },
  );

  it('resumes in the folder it made when the same command runs again', async () => {
    const name = `${launchAgents}/com.update.plist`;
    const m = await updateMetalink(name, 8_000_000, 2_000_000);
    const first = startStitch(['get', 'update.meta4'], dir, { timeoutMs: 15_000 });
    while (m.stats.bytesSent < 1_500_000) await new Promise((resolve) => setTimeout(resolve, 20));
    first.child.kill('SIGINT');
    expect((await first.done).code).toBe(130);
    const result = await stitch(['get', 'update.meta4']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(saving('./update/'));
    expect(result.stderr).toContain('stitch: resuming com.update.plist\n');
    await expectSaved(`update/${name}`, 8_000_000);
    expect((await readdir(dir)).sort()).toEqual(['AppData', 'Library', 'update', 'update.meta4']);
    await expectLoginFoldersEmpty();
  });

  /** What a path is, to tell that the CLI left it as it was. */
  async function describePath(path: string): Promise<unknown> {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) return { link: await readlink(path) };
    if (stats.isDirectory()) return { folder: (await readdir(path)).sort() };
    return { file: await readFile(path, 'utf8') };
  }

  it.each<[string, (path: string) => Promise<unknown>]>([
    ['a folder Stitch did not make', (path) => mkdir(path)],
    [
      "another Metalink's folder",
      async (path) => {
        await mkdir(path);
        await writeFile(join(path, '.stitch-metalink'), 'http://127.0.0.1:9/update.meta4\n');
      },
    ],
    ['a file', (path) => writeFile(path, 'precious\n')],
    [
      "a link to a folder holding this Metalink's marker",
      async (path) => {
        const planted = join(root, 'planted');
        await mkdir(planted);
        await writeFile(join(planted, '.stitch-metalink'), `${join(await realpath(dir), 'update.meta4')}\n`);
        await symlink(planted, path);
      },
    ],
  ])('saves in ./update (1)/ when ./update is %s', async (_, plant) => {
    const name = `${launchAgents}/com.update.plist`;
    await updateMetalink(name);
    await plant(join(dir, 'update'));
    const before = await describePath(join(dir, 'update'));
    const result = await stitch(['get', 'update.meta4']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(saving('./update (1)/'));
    await expectSaved(`update (1)/${name}`);
    expect(await describePath(join(dir, 'update'))).toEqual(before);
    await expectLoginFoldersEmpty();
  });

  it("names a remote Metalink's folder after its URL: ./Library (1)/ when ./Library is here", async () => {
    const m = await mirror({ size, seed });
    const doc = metalinkXml([{ name: 'LaunchAgents/com.update.plist', urls: [m.url] }]);
    const server = await hostile((_req, res) => void res.writeHead(200, { 'content-type': 'application/metalink4+xml' }).end(doc));
    const url = `${server.origin}/Library.meta4`;
    const result = await stitch(['get', url]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(saving('./Library (1)/'));
    await expectSaved('Library (1)/LaunchAgents/com.update.plist');
    expect(await readFile(join(dir, 'Library (1)', '.stitch-metalink'), 'utf8')).toBe(`${url}\n`);
    await expectLoginFoldersEmpty();
  });

  it('saves in -d DIR as told, in the folders DIR already has', async () => {
    const name = `${launchAgents}/com.update.plist`;
    await mkdir(join(dir, 'home', launchAgents), { recursive: true });
    await updateMetalink(name);
    const result = await stitch(['get', 'update.meta4', '-d', 'home']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(saving('./home/'));
    await expectSaved(`home/${name}`);
    expect((await readdir(dir)).sort()).toEqual(['AppData', 'Library', 'home', 'update.meta4']);
    await expectLoginFoldersEmpty();
  });

  it('saves a URL in -d DIR, making DIR', async () => {
    const m = await mirror({ size, seed, path: '/plain.bin' });
    const result = await stitch(['get', m.url, '-d', 'new/folder']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('saving the Metalink');
    await expectSaved('new/folder/plain.bin');
    expect(await readdir(join(dir, 'new', 'folder'))).toEqual(['plain.bin']);
  });

  it('saves a relative -o FILE inside -d DIR', async () => {
    const m = await mirror({ size, seed });
    const result = await stitch(['get', m.url, '-d', 'out', '-o', 'named.bin']);
    expect(result.code, result.stderr).toBe(0);
    await expectSaved('out/named.bin');
    expect(await readdir(join(dir, 'out'))).toEqual(['named.bin']);
  });

  it('saves the one file of a Metalink where -o says, with no folder of its own', async () => {
    await updateMetalink(`${launchAgents}/com.update.plist`);
    const result = await stitch(['get', 'update.meta4', '-o', 'update.plist']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('saving the Metalink');
    await expectSaved('update.plist');
    expect((await readdir(dir)).sort()).toEqual(['AppData', 'Library', 'update.meta4', 'update.plist']);
    await expectLoginFoldersEmpty();
  });
});
