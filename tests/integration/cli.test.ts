import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runStitch, startStitch } from '../support/cli';
import { contentSha256 } from '../support/content';
import { startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';

const MiB = 1024 * 1024;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let mirrors: Mirror[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stitch-cli-'));
});
afterEach(async () => {
  await Promise.all(mirrors.map((m) => m.close()));
  mirrors = [];
  await rm(dir, { recursive: true, force: true });
});

async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  mirrors.push(m);
  return m;
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('stitch get', () => {
  it('saves the exact file under the server-given name and leaves no partial files', async () => {
    const size = 3 * MiB + 5;
    const m = await mirror({ size, seed: 21, filename: 'data set.bin' });
    const result = await runStitch(['get', m.url], dir);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/saved .*data set\.bin/);
    expect(await readdir(dir)).toEqual(['data set.bin']);
    expect(await fileSha256(join(dir, 'data set.bin'))).toBe(await contentSha256(21, size));
  });

  it('starts from the snapshot this Node made, and from the bundle when there is none for this Node', async () => {
    const size = 2 * MiB + 7;
    const m = await mirror({ size, seed: 27 });
    const fromSnapshot = await runStitch(['get', m.url, '-o', 'a.bin'], dir);
    expect(fromSnapshot.code, fromSnapshot.stderr).toBe(0);
    expect(fromSnapshot.execArgv).toContain('--snapshot-blob');
    // A copy of the launcher and the bundle, without a snapshot (as after an upgrade of Node).
    const copy = await mkdtemp(join(tmpdir(), 'stitch-launcher-'));
    try {
      await mkdir(join(copy, 'bin'));
      await mkdir(join(copy, 'dist/cli'), { recursive: true });
      for (const file of ['bin/stitch', 'bin/node-flags', 'bin/snapshot-name', 'dist/cli/stitch.cjs'])
        await cp(join(ROOT, file), join(copy, file));
      const fromBundle = await runStitch(['get', m.url, '-o', 'b.bin'], dir, { bin: join(copy, 'bin/stitch') });
      expect(fromBundle.code, fromBundle.stderr).toBe(0);
      expect(fromBundle.execArgv).not.toContain('--snapshot-blob');
      expect(fromBundle.execArgv).toContain('--no-opt');
      // This Node's snapshot, but other flags (as after an update that changed them, before a build): Node would
      // refuse the snapshot and not start; the launcher does not find one for these flags and starts from the bundle.
      for (const blob of (await readdir(join(ROOT, 'dist/cli'))).filter((name) => name.endsWith('.blob'))) {
        await cp(join(ROOT, 'dist/cli', blob), join(copy, 'dist/cli', blob));
      }
      await writeFile(join(copy, 'bin/node-flags'), '--max-semi-space-size=1 --no-opt\n');
      const otherFlags = await runStitch(['get', m.url, '-o', 'c.bin'], dir, { bin: join(copy, 'bin/stitch') });
      expect(otherFlags.code, otherFlags.stderr).toBe(0);
      expect(otherFlags.execArgv).not.toContain('--snapshot-blob');
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
    const expected = await contentSha256(27, size);
    expect(await fileSha256(join(dir, 'a.bin'))).toBe(expected);
    expect(await fileSha256(join(dir, 'b.bin'))).toBe(expected);
    expect(await fileSha256(join(dir, 'c.bin'))).toBe(expected);
  });

  it('loads neither fetch (undici) nor tls nor zlib for a plain http download: together they cost ~17 MiB of memory', async () => {
    const size = 2 * MiB;
    const m = await mirror({ size, seed: 22 });
    const result = await runStitch(['get', m.url, '-o', 'out.bin'], dir);
    expect(result.code).toBe(0);
    expect(await fileSha256(join(dir, 'out.bin'))).toBe(await contentSha256(22, size));
    const loaded = result.loadedModules ?? [];
    expect(loaded).toContain('net');
    expect(loaded.filter((m) => /undici|^tls$|^zlib$/.test(m))).toEqual([]);
  });

  it('survives a server that resets every second', async () => {
    const size = 12 * MiB;
    const m = await mirror({ size, seed: 22, rate: 8 * MiB, latencyMs: 20, faults: { resetAfterMs: 1000 } });
    const result = await runStitch(['get', m.url, '-o', 'out.bin'], dir);
    expect(result.code).toBe(0);
    expect(await fileSha256(join(dir, 'out.bin'))).toBe(await contentSha256(22, size));
    expect(m.stats.requests.length).toBeGreaterThan(1);
  });

  it('resumes after being killed, re-fetching at most the blocks in flight', async () => {
    const size = 24 * MiB;
    const m = await mirror({ size, seed: 23, rate: 12 * MiB });
    const first = startStitch(['get', m.url, '-o', 'big.bin'], dir);
    await until(() => m.stats.bytesSent > 8 * MiB);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    expect(existsSync(join(dir, 'big.bin'))).toBe(false);
    const sentBeforeKill = m.stats.bytesSent;
    const requestsBeforeKill = m.stats.requests.length;

    const second = await runStitch(['get', m.url, '-o', 'big.bin'], dir);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('resuming');
    expect(await fileSha256(join(dir, 'big.bin'))).toBe(await contentSha256(23, size));
    // The rerun knows the file from its state: only missing ranges, validated with If-Range.
    const resumed = m.stats.requests.slice(requestsBeforeKill);
    expect(resumed.length).toBeGreaterThan(0);
    for (const r of resumed) expect(r.ifRange).toBeDefined();
    // The file store loses only writes that had not resolved: a few 1 MiB blocks at most.
    const refetched = m.stats.bytesSent - size;
    expect(refetched).toBeLessThan(6 * MiB);
    expect(sentBeforeKill).toBeGreaterThan(refetched);
    expect(await readdir(dir)).toEqual(['big.bin']);
  });

  it('downloads over https (its own client over TLS, the certificate checked)', async () => {
    const tls = (name: string) => fileURLToPath(new URL(`../support/tls/loopback.${name}.pem`, import.meta.url));
    const size = 5 * MiB + 3;
    const m = await mirror({ size, seed: 26, tls: { key: readFileSync(tls('key'), 'utf8'), cert: readFileSync(tls('cert'), 'utf8') } });
    expect(m.url).toMatch(/^https:/);
    const untrusted = await runStitch(['get', m.url, '-o', 'out.bin', '--retries', '1'], dir);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/self-signed certificate/);
    process.env.NODE_EXTRA_CA_CERTS = tls('cert');
    try {
      const result = await runStitch(['get', m.url, '-o', 'out.bin'], dir);
      expect(result.code, result.stderr).toBe(0);
    } finally {
      delete process.env.NODE_EXTRA_CA_CERTS;
    }
    expect(await fileSha256(join(dir, 'out.bin'))).toBe(await contentSha256(26, size));
  });

  it('exits non-zero with a readable message when the server refuses', async () => {
    const m = await mirror({ size: 10 });
    const result = await runStitch(['get', `${m.origin}/nope.bin`, '-o', 'x.bin'], dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/failed: the server answered 404/);
  });

  it('rejects bad usage with exit code 2', async () => {
    const result = await runStitch(['get', 'ftp://example.invalid/x'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/only http and https/);
  });
});

describe('stitch get --limit-rate', () => {
  it('keeps the total rate over all mirrors under the limit', async () => {
    const size = 3 * MiB;
    const a = await mirror({ size, seed: 24 });
    const b = await mirror({ size, seed: 24 });
    const started = Date.now();
    const result = await runStitch(['get', a.url, '--mirror', b.url, '-o', 'slow.bin', '--limit-rate', '1M'], dir);
    const seconds = (Date.now() - started) / 1000;
    expect(result.code).toBe(0);
    expect(await fileSha256(join(dir, 'slow.bin'))).toBe(await contentSha256(24, size));
    // 3 MiB at 1 MiB/s, less the quarter-second burst.
    expect(seconds).toBeGreaterThan(2.5);
    expect(seconds).toBeLessThan(6);
    expect(a.stats.bytesSent).toBeGreaterThan(0);
    expect(b.stats.bytesSent).toBeGreaterThan(0);
  });

  it('rejects a malformed rate', async () => {
    const result = await runStitch(['get', 'http://127.0.0.1:1/x', '--limit-rate', 'fast'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--limit-rate needs a rate/);
  });
});
