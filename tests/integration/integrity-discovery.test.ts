import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { englishDrop } from '../../src/engine';
import { runStitch } from '../support/cli';
import { contentBytes, contentSha256 } from '../support/content';
import { metalinkXml, serveDocument } from '../support/metalink-doc';
import { defaultEtag, defaultLastModified } from '../support/mirror-server';
import { MiB, useTestBed } from '../support/test-bed';

const { mirror, download, onCleanup } = useTestBed();
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stitch-integrity-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
});

const base64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

describe('digests', () => {
  it('verifies the Repr-Digest the server announces', async () => {
    const size = 3 * MiB;
    const sha = await contentSha256(51, size);
    const m = await mirror({ size, seed: 51, extraHeaders: { 'Repr-Digest': `sha-256=:${base64(sha)}:` } });
    const run = await download(m.url);
    expect(run.result.status).toBe('complete');
    expect(run.job.state.file?.digests).toEqual([{ algorithm: 'sha-256', hex: sha, source: 'the server' }]);
  });

  it('never completes a file whose bytes contradict the announced digest, and discards them', async () => {
    const size = 2 * MiB;
    const wrong = await contentSha256(52, size + 1);
    const m = await mirror({ size, seed: 52, extraHeaders: { Digest: `SHA-256=${base64(wrong)}` } });
    const run = await download(m.url);
    expect(run.result.status).toBe('failed');
    expect(run.result.error?.code).toBe('verify');
    expect(run.result.error?.message).toMatch(
      /SHA-256 is [0-9a-f]{64}, but the server announced [0-9a-f]{64}; the downloaded bytes were discarded/,
    );
    expect(await run.store.storedRanges('job')).toEqual([]);
  });

  it('the CLI saves nothing when --checksum does not match, and saves the file when it does', async () => {
    const size = MiB;
    const m = await mirror({ size, seed: 53 });
    const bad = await runStitch(['get', m.url, '-o', 'f.bin', '--checksum', `sha-256=${'0'.repeat(64)}`], dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/SHA-256 is .* but you announced 0{64}/);
    expect(existsSync(join(dir, 'f.bin'))).toBe(false);
    const good = await runStitch(['get', m.url, '-o', 'f.bin', '--checksum', `sha256=${await contentSha256(53, size)}`], dir);
    expect(good.code).toBe(0);
    expect(existsSync(join(dir, 'f.bin'))).toBe(true);
  });

  it('drops a mirror that announces a different digest than the primary', async () => {
    const size = 4 * MiB;
    const sha = await contentSha256(54, size);
    const other = await contentSha256(55, size);
    const primary = await mirror({ size, seed: 54, rate: 8 * MiB, extraHeaders: { 'Repr-Digest': `sha-256=:${base64(sha)}:` } });
    const liar = await mirror({ size, seed: 54, extraHeaders: { 'Repr-Digest': `sha-256=:${base64(other)}:` } });
    const run = await download(primary.url, {}, undefined, [liar.url]);
    expect(run.result.status).toBe('complete');
    expect(run.result.mirrors[1]).toMatchObject({ phase: 'dropped', dropped: { kind: 'other-digest' } });
  });
});

describe('block-level re-verification', () => {
  it('with only a whole-file digest, finds and replaces what a lying mirror sent, then saves the exact file', async () => {
    const size = 6 * MiB;
    const sha = await contentSha256(75, size);
    const primary = await mirror({ size, seed: 75, rate: 6 * MiB, extraHeaders: { 'Repr-Digest': `sha-256=:${base64(sha)}:` } });
    const liar = await mirror({ size, seed: 75, rate: 6 * MiB });
    let switched = false;
    const run = await download(
      primary.url,
      {},
      (job) =>
        job.on('progress', () => {
          if (!switched && job.snapshot().mirrors[1]?.phase === 'active') {
            switched = true;
            liar.setContent({ seed: 76, etag: defaultEtag(75, size), lastModified: defaultLastModified(75) });
          }
        }),
      [liar.url],
    );
    expect(switched).toBe(true);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(sha);
    expect(run.notices.join('\n')).toMatch(/re-checking the \d+ ranges mirrors sent/);
    expect(run.notices.join('\n')).toMatch(/sent bytes that differ .* dropped/);
    expect(run.job.state.mirrors).toEqual([]);
  });
});

describe('finding mirrors', () => {
  it('uses mirrors advertised with Link rel=duplicate when the response carries a digest', async () => {
    const size = 16 * MiB; // long enough for both mirrors to pass their probe on a loaded machine
    const sha = await contentSha256(56, size);
    const a = await mirror({ size, seed: 56, rate: 4 * MiB });
    const b = await mirror({ size, seed: 56, rate: 4 * MiB });
    const primary = await mirror({
      size,
      seed: 56,
      rate: 4 * MiB,
      extraHeaders: {
        'Repr-Digest': `sha-256=:${base64(sha)}:`,
        Link: `<${a.url}>; rel=duplicate; pri=1, <${b.url}>; rel="duplicate"; pri=2; geo=de`,
      },
    });
    const run = await download(primary.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(sha);
    expect(run.job.state.mirrors).toEqual([a.url, b.url]);
    expect(a.stats.bytesSent).toBeGreaterThan(MiB);
    expect(b.stats.bytesSent).toBeGreaterThan(MiB);
  });

  it('ignores Link rel=duplicate without a digest, as RFC 6249 requires', async () => {
    const size = 2 * MiB;
    const a = await mirror({ size, seed: 57 });
    const primary = await mirror({ size, seed: 57, extraHeaders: { Link: `<${a.url}>; rel=duplicate` } });
    const run = await download(primary.url);
    expect(run.result.status).toBe('complete');
    expect(a.stats.requests).toHaveLength(0);
  });

  it('follows Link rel=describedby to a Metalink file for mirrors and hashes', async () => {
    const size = 6 * MiB;
    const sha = await contentSha256(58, size);
    const a = await mirror({ size, seed: 58, rate: 4 * MiB });
    const doc = await serveDocument(metalinkXml([{ name: 'file.bin', size, sha256: sha, urls: [a.url] }]));
    onCleanup(doc.close);
    const primary = await mirror({
      size,
      seed: 58,
      rate: 4 * MiB,
      extraHeaders: { Link: `<${doc.url}>; rel=describedby; type="application/metalink4+xml"` },
    });
    const run = await download(primary.url);
    expect(run.result.status).toBe('complete');
    expect(run.job.state.expected?.digests[0]).toMatchObject({ algorithm: 'sha-256', hex: sha });
    expect(a.stats.bytesSent).toBeGreaterThan(0);
  });
});

describe('stitch get FILE.meta4', () => {
  it('downloads every file of a Metalink file from all its URLs and checks the hashes', async () => {
    const sizes = [3 * MiB, 1 * MiB];
    const shas = await Promise.all(sizes.map((size, i) => contentSha256(60 + i, size)));
    const servers = await Promise.all(
      sizes.flatMap((size, i) => [mirror({ size, seed: 60 + i, rate: 4 * MiB }), mirror({ size, seed: 60 + i, rate: 4 * MiB })]),
    );
    const xml = metalinkXml([
      { name: 'one.bin', size: sizes[0], sha256: shas[0], urls: [servers[0]!.url, servers[1]!.url] },
      { name: 'sub/two.bin', size: sizes[1], sha256: shas[1], urls: [servers[2]!.url, servers[3]!.url] },
    ]);
    await writeFile(join(dir, 'files.meta4'), xml);
    const result = await runStitch(['get', 'files.meta4'], dir);
    expect(result.code, result.stderr).toBe(0);
    const hash = async (p: string) =>
      createHash('sha256')
        .update(await import('node:fs/promises').then((fs) => fs.readFile(p)))
        .digest('hex');
    expect(await hash(join(dir, 'files/one.bin'))).toBe(shas[0]);
    expect(await hash(join(dir, 'files/sub/two.bin'))).toBe(shas[1]);
    expect(servers[1]!.stats.bytesSent).toBeGreaterThan(0);
  });

  it('refuses a Metalink file that names a path outside the folder', async () => {
    const m = await mirror({ size: 10 });
    await writeFile(join(dir, 'evil.meta4'), metalinkXml([{ name: '../evil.bin', urls: [m.url] }]));
    const result = await runStitch(['get', 'evil.meta4'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unsafe|\.\./);
    expect(m.stats.requests).toHaveLength(0);
    expect(await readdir(dir)).toEqual(['evil.meta4']);
  });

  it('a Metalink size that the server contradicts is a clear error', async () => {
    const m = await mirror({ size: 1000, seed: 61 });
    await writeFile(join(dir, 'f.meta4'), metalinkXml([{ name: 'f.bin', size: 999, urls: [m.url] }]));
    const result = await runStitch(['get', 'f.meta4'], dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/1000 bytes, but 999 were expected/);
    expect(contentBytes(61, 0, 1).length).toBe(1);
  });
});

describe('piece hashes', () => {
  const size = 8 * MiB;
  const pieceLength = 256 * 1024;
  const pieceHashes = (seed: number) => {
    const hashes: string[] = [];
    for (let start = 0; start < size; start += pieceLength) {
      hashes.push(
        createHash('sha256')
          .update(contentBytes(seed, start, Math.min(size, start + pieceLength)))
          .digest('hex'),
      );
    }
    return hashes;
  };

  it('finds the pieces a lying mirror corrupted, fetches them again elsewhere, and drops the mirror', async () => {
    const hashes = pieceHashes(70);
    const good = await mirror({ size, seed: 70, rate: 4 * MiB });
    const liar = await mirror({ size, seed: 70, rate: 4 * MiB });
    let switched = false;
    const run = await download(
      good.url,
      {},
      (job) =>
        job.on('progress', () => {
          // Once past the probe, the mirror serves other bytes under the same validators.
          if (!switched && job.snapshot().mirrors[1]?.phase === 'active') {
            switched = true;
            liar.setContent({ seed: 71, etag: defaultEtag(70, size), lastModified: defaultLastModified(70) });
          }
        }),
      [liar.url],
      { digests: [], pieces: { algorithm: 'sha-256', length: pieceLength, hashes } },
    );
    expect(switched).toBe(true);
    expect(run.result.error).toBeUndefined();
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(70, size));
    expect(run.result.mirrors[1]).toMatchObject({ phase: 'dropped' });
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/fail the hash of piece \d+/);
    expect(run.notices.join('\n')).toMatch(/piece \d+ .* failed its hash; fetching it again/);
  });

  it('fails clearly when the only source keeps sending a piece that fails its hash', async () => {
    const hashes = pieceHashes(72);
    hashes[5] = '0'.repeat(64);
    const m = await mirror({ size, seed: 72 });
    const run = await download(m.url, {}, undefined, [], { digests: [], pieces: { algorithm: 'sha-256', length: pieceLength, hashes } });
    expect(run.result.status).toBe('failed');
    expect(run.result.error?.message).toMatch(/piece 5 \(bytes 1310720–1572863\) fails its hash from every source/);
  });
});
