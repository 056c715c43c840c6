/**
 * What Stitch hands aria2, and how it talks to it, against a real `aria2c --enable-rpc` and hostile
 * loopback servers: an RPC endpoint that redirects never gets the token elsewhere, an endless answer
 * is cut, a Metalink or torrent found in a downloaded body is not followed unless the user sent one
 * on purpose, and the file is named by Stitch, not by the server.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Aria2Link } from '../../src/background/aria2/aria2-link';
import { planHandoff } from '../../src/background/aria2/handoff';
import { Aria2Client, STATUS_KEYS, type Aria2Status } from '../../src/background/aria2/rpc';
import { DEFAULT_SETTINGS, parseSettings } from '../../src/settings/schema';
import { startAria2, type Aria2Daemon } from '../support/aria2-daemon';
import { closedAfterEach } from '../support/closed-after-each';
import { FakeBrowser } from '../support/fake-browser';
import { sendForever, startHostile, type HostileServer } from '../support/hostile-server';
import { metalinkXml } from '../support/metalink-doc';
import { startMirror, type Mirror } from '../support/mirror-server';

const closing = closedAfterEach();

async function aria2(): Promise<Aria2Daemon> {
  return closing(await startAria2());
}

async function hostile(handler: Parameters<typeof startHostile>[0]): Promise<HostileServer> {
  const server = await startHostile(handler);
  return closing(server);
}

async function mirror(size: number): Promise<Mirror> {
  const m = await startMirror({ size, seed: 5, path: '/planted.bin' });
  return closing(m);
}

/** A server answering every request with `body` as `type`. */
const serving = (body: string | Uint8Array, type: string) =>
  hostile((_req, res) => {
    res.writeHead(200, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });

/** Waits until aria2 has finished `gid` (and whatever it started from it). */
async function finished(client: Aria2Client, gid: string): Promise<Aria2Status & { followedBy?: string[] }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await client.call<Aria2Status & { followedBy?: string[] }>('aria2.tellStatus', gid, [...STATUS_KEYS, 'followedBy']);
    if (status.status === 'complete' || status.status === 'error' || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const linkTo = (daemon: Aria2Daemon) =>
  new Aria2Link(
    new FakeBrowser(),
    () => ({ ...parseSettings(DEFAULT_SETTINGS), aria2Url: daemon.url, aria2Secret: daemon.secret }),
    () => {},
  );

it.each([301, 302, 303, 307, 308])(
  'an RPC endpoint answering %i is not followed: the token never reaches where it points',
  async (status) => {
    const elsewhere = await hostile((_req, res) => res.end('{"jsonrpc":"2.0","id":"1","result":{"version":"1.37.0"}}'));
    const endpoint = await hostile((_req, res) => {
      res.writeHead(status, { location: `${elsewhere.origin}/jsonrpc` });
      res.end();
    });
    const client = new Aria2Client({ url: `${endpoint.origin}/jsonrpc`, secret: 'the-secret' });
    const failure = await client.call('aria2.getVersion').catch((error: unknown) => error);
    expect(failure).toMatchObject({ kind: 'not-aria2', detail: expect.stringContaining('redirect') });
    expect(endpoint.requests).toHaveLength(1);
    expect(elsewhere.requests).toHaveLength(0);
    expect(elsewhere.connections).toBe(0);
  },
);

it('the options page’s Test of a redirecting endpoint says something other than aria2 answered, and sends nothing on', async () => {
  const daemon = await aria2();
  const endpoint = await hostile((_req, res) => {
    res.writeHead(307, { location: daemon.url });
    res.end();
  });
  const link = linkTo(daemon);
  expect(await link.check(`${endpoint.origin}/jsonrpc`, daemon.secret, false)).toEqual({ problem: 'not-aria2' });
  expect(endpoint.requests).toEqual(['/jsonrpc']);
});

it('an endless answer from the endpoint is cut at its bound, within seconds', async () => {
  const endpoint = await hostile((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    sendForever(res, `{"jsonrpc":"2.0","id":"1","result":"${'x'.repeat(64 * 1024)}`);
  });
  const started = Date.now();
  const failure = await new Aria2Client({ url: `${endpoint.origin}/jsonrpc`, secret: 's' })
    .call('aria2.getVersion')
    .catch((e: unknown) => e);
  expect(failure).toMatchObject({ kind: 'not-aria2' });
  expect(Date.now() - started).toBeLessThan(5_000);
});

it('a Metalink in a downloaded body is saved as the file, not followed, whether a rule or the user sent it', async () => {
  const daemon = await aria2();
  const target = await mirror(64 * 1024);
  const metalink = metalinkXml([{ name: 'planted.bin', urls: [target.url] }]);
  const server = await serving(metalink, 'application/metalink4+xml');
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });

  const byRule = planHandoff({ url: `${server.origin}/release.bin`, mirrors: [] }, 2, 'rule');
  expect(await finished(client, await client.call<string>('aria2.addUri', byRule.uris, byRule.options))).toMatchObject({
    status: 'complete',
  });
  const byUser = await finished(client, await linkTo(daemon).send({ url: `${server.origin}/other.bin`, mirrors: [] }));
  expect(byUser).toMatchObject({ status: 'complete' });
  expect(byUser.followedBy).toBeUndefined();

  expect(target.stats.requests).toEqual([]);
  expect((await readdir(daemon.dir)).sort()).toEqual(['other.bin', 'release.bin']);
  expect(await readFile(join(daemon.dir, 'release.bin'), 'utf8')).toBe(metalink);
});

it('a torrent in a downloaded body is saved as the file, not followed to its web seed', async () => {
  const daemon = await aria2();
  const target = await mirror(16 * 1024);
  // Bencoded by hand: one 16 KiB piece (its hash does not matter: nothing may fetch it).
  const piece = createHash('sha1')
    .update(Buffer.alloc(16 * 1024))
    .digest();
  const torrent = Buffer.concat([
    Buffer.from(`d8:url-list${target.url.length}:${target.url}4:infod6:lengthi16384e4:name11:planted.bin12:piece lengthi16384e6:pieces20:`),
    piece,
    Buffer.from('ee'),
  ]);
  const server = await serving(torrent, 'application/x-bittorrent');
  const gid = await linkTo(daemon).send({ url: `${server.origin}/release.bin`, mirrors: [] });
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  expect(await finished(client, gid)).toMatchObject({ status: 'complete' });
  // A torrent's downloads run on: give a followed one time to reach its seed.
  await new Promise((r) => setTimeout(r, 1_000));
  expect(target.stats.requests).toEqual([]);
  expect(await readdir(daemon.dir)).toEqual(['release.bin']);
});

it('a Metalink the user sends on purpose (a .meta4 link) is followed, its file named and contained by aria2', async () => {
  const daemon = await aria2();
  const target = await mirror(64 * 1024);
  const server = await serving(metalinkXml([{ name: 'planted.bin', urls: [target.url] }]), 'application/metalink4+xml');
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  const status = await finished(client, await linkTo(daemon).send({ url: `${server.origin}/release.meta4`, mirrors: [] }));
  expect(status.followedBy).toHaveLength(1);
  expect(await finished(client, status.followedBy![0]!)).toMatchObject({ status: 'complete' });
  expect(target.stats.requests.length).toBeGreaterThan(0);
  expect(existsSync(join(daemon.dir, 'planted.bin'))).toBe(true);
});

it('names the file as Stitch does, not as the server’s Content-Disposition says', async () => {
  const daemon = await aria2();
  const file = closing(await startMirror({ size: 32 * 1024, seed: 6, filename: 'server chose this.exe' }));
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  expect(await finished(client, await linkTo(daemon).send({ url: file.url, mirrors: [] }))).toMatchObject({ status: 'complete' });
  expect(await readdir(daemon.dir)).toEqual(['file.bin']);
});
