/**
 * Stitch's aria2 client and hand-off against a real `aria2c --enable-rpc` on loopback: the file
 * lands exact in aria2's folder from every mirror, aria2 checks the digest Stitch passes, and a
 * wrong token or a stopped aria2 are told apart.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Aria2Link } from '../../src/background/aria2/aria2-link';
import { planHandoff } from '../../src/background/aria2/handoff';
import { Aria2Client, Aria2Failure, STATUS_KEYS, type Aria2Status } from '../../src/background/aria2/rpc';
import { aria2Row } from '../../src/background/aria2/status';
import type { Aria2Row, PortMessage } from '../../src/messages';
import { DEFAULT_SETTINGS, parseSettings } from '../../src/settings/schema';
import { startAria2, type Aria2Daemon } from '../support/aria2-daemon';
import { closedAfterEach } from '../support/closed-after-each';
import { contentSha256 } from '../support/content';
import { FakeBrowser } from '../support/fake-browser';
import { startMirror, type Mirror } from '../support/mirror-server';

const MiB = 1024 * 1024;
const closing = closedAfterEach();

async function aria2(): Promise<Aria2Daemon> {
  return closing(await startAria2());
}

async function mirror(options: Parameters<typeof startMirror>[0]): Promise<Mirror> {
  const m = await startMirror(options);
  return closing(m);
}

/** The same server by another name: aria2 counts connections per host name, and every test server is on 127.0.0.1. */
const byOtherName = (url: string) => url.replace('//127.0.0.1:', '//localhost:');

async function settled(client: Aria2Client, gid: string, timeoutMs = 20_000): Promise<Aria2Row> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = aria2Row(await client.call<Aria2Status>('aria2.tellStatus', gid, STATUS_KEYS));
    if (row.state === 'done' || row.state === 'failed' || Date.now() > deadline) return row;
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('hands a file with two mirrors and its digest to aria2, which fetches from both and saves it exact', async () => {
  const daemon = await aria2();
  const size = 24 * MiB;
  const a = await mirror({ size, seed: 7, rate: 8 * MiB });
  const b = await mirror({ size, seed: 7, rate: 8 * MiB });
  const hex = await contentSha256(7, size);
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  const plan = planHandoff(
    { url: a.url, mirrors: [byOtherName(b.url)], name: 'two mirrors.bin', digests: [{ algorithm: 'sha-256', hex }] },
    4,
    'user',
  );
  const gid = await client.call<string>('aria2.addUri', plan.uris, plan.options);

  const row = await settled(client, gid);
  expect(row).toMatchObject({ state: 'done', name: 'two mirrors.bin', totalBytes: size, doneBytes: size });
  const saved = await readFile(join(daemon.dir, 'two mirrors.bin'));
  expect(createHash('sha256').update(saved).digest('hex')).toBe(hex);
  // Both mirrors carried a good share of the file (each is capped at a third of the whole).
  expect(a.stats.bytesSent).toBeGreaterThan(size / 4);
  expect(b.stats.bytesSent).toBeGreaterThan(size / 4);
});

it('a mirror serving other bytes makes aria2 fail the digest check, reported as such', async () => {
  const daemon = await aria2();
  const size = 4 * MiB;
  const good = await mirror({ size, seed: 7, rate: 4 * MiB });
  const other = await mirror({ size, seed: 8, rate: 4 * MiB });
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  const plan = planHandoff(
    { url: good.url, mirrors: [byOtherName(other.url)], digests: [{ algorithm: 'sha-256', hex: await contentSha256(7, size) }] },
    2,
    'user',
  );
  const gid = await client.call<string>('aria2.addUri', plan.uris, plan.options);
  expect(await settled(client, gid)).toMatchObject({ state: 'failed', problem: 'checksum' });
  // aria2 keeps its control file beside a file that failed its check: the file counts as unfinished, not as saved.
  expect(existsSync(join(daemon.dir, 'file.bin.aria2'))).toBe(true);
});

it('sends the page as Referer only with URIs of the file’s own origin, and no cookies', async () => {
  const daemon = await aria2();
  const size = 1 * MiB;
  const own = await mirror({ size, seed: 3 });
  const elsewhere = await mirror({ size, seed: 3 });
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  const plan = planHandoff({ url: own.url, mirrors: [elsewhere.url], referrer: 'http://site.example/page' }, 4, 'user');
  expect(plan.leftOut).toEqual([elsewhere.url]);
  const gid = await client.call<string>('aria2.addUri', plan.uris, plan.options);
  expect(await settled(client, gid)).toMatchObject({ state: 'done' });
  expect(own.stats.requests.every((r) => r.cookie === undefined && r.referer === 'http://site.example/page')).toBe(true);
  expect(elsewhere.stats.requests).toEqual([]);
});

it('tells a wrong token from a stopped aria2', async () => {
  const daemon = await aria2();
  const wrong = new Aria2Client({ url: daemon.url, secret: 'not-the-secret' });
  await expect(wrong.call('aria2.getVersion')).rejects.toMatchObject({ kind: 'unauthorized' });
  const right = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  expect(await right.call<{ version: string }>('aria2.getVersion')).toMatchObject({ version: expect.stringMatching(/^1\./) });
  await daemon.kill();
  const failure = await right.call('aria2.getVersion').catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(Aria2Failure);
  expect(failure).toMatchObject({ kind: 'unreachable' });
});

it('lists the handed downloads: one aria2 no longer has is removed, and aria2 down is said once for all', async () => {
  const daemon = await aria2();
  const file = await mirror({ size: 2 * MiB, seed: 9 });
  const settings = { ...parseSettings(DEFAULT_SETTINGS), aria2Url: daemon.url, aria2Secret: daemon.secret };
  const posted: PortMessage[] = [];
  const link = new Aria2Link(
    new FakeBrowser(),
    () => settings,
    (message) => posted.push(message),
  );
  const last = () => posted.at(-1) as Extract<PortMessage, { type: 'aria2' }>;

  const gid = await link.send({ url: file.url, mirrors: [], name: 'listed.bin' });
  const client = new Aria2Client({ url: daemon.url, secret: daemon.secret });
  expect(await settled(client, gid)).toMatchObject({ state: 'done' });
  await link.refresh();
  expect(last()).toMatchObject({ configured: true, rows: [{ gid, state: 'done', name: 'listed.bin', totalBytes: 2 * MiB }] });
  expect(last().trouble).toBeUndefined();

  // aria2 forgets it (as after a restart): the row says so, and nothing is wrong with aria2 itself.
  await client.call('aria2.removeDownloadResult', gid);
  await link.refresh();
  expect(last().rows).toEqual([expect.objectContaining({ gid, state: 'removed', url: file.url })]);
  expect(last().trouble).toBeUndefined();

  await daemon.kill();
  await link.refresh();
  expect(last().trouble).toBe('unreachable');
  expect(last().rows.map((r) => r.gid)).toEqual([gid]);
});
