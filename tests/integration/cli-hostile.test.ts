/**
 * The CLI against hostile servers and planted files: each case ends within seconds, under
 * 200 MB of memory, with the exact file or a clear message, and creates nothing outside its folder.
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runStitch, type CliResult } from '../support/cli';
import { sendForever, startHostile, type HostileServer } from '../support/hostile-server';

const MB = 1e6;
/** The test's own folder: `dir` (where the CLI runs) and a sibling the CLI must never touch. */
let root: string;
let dir: string;
let outside: string;
let servers: HostileServer[] = [];

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
});
