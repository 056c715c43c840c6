import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkRelink, DEFAULT_OPTIONS, type ByteRange, type RemoteFile } from '../../src/engine';
import { sampleRanges } from '../../src/engine/relink-evidence';
import { FileStore } from '../../src/storage/file-store';
import { contentBytes } from '../support/content';
import type { Mirror } from '../support/mirror-server';
import { MiB, useTestBed } from '../support/test-bed';

const bed = useTestBed();
const SIZE = 4 * MiB;
const STORED = 1536 * 1024; // by default bytes [0, STORED) of seed 61 are stored

/** A store holding `ranges` of `content`, and what the job knew of the file from `old`. */
async function storedJob(
  old: Mirror,
  ranges: ByteRange[] = [{ start: 0, end: STORED }],
  content = contentBytes(61, 0, SIZE),
): Promise<{ store: FileStore; file: RemoteFile }> {
  const dir = await mkdtemp(join(tmpdir(), 'stitch-relink-'));
  const store = new FileStore(dir);
  bed.onCleanup(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  for (const { start, end } of ranges) await store.writeBlock('job', start, content.slice(start, end));
  const response = await fetch(old.url, { headers: { Range: 'bytes=0-0' } });
  await response.arrayBuffer();
  old.resetStats();
  const file: RemoteFile = {
    size: SIZE,
    etag: response.headers.get('etag') ?? undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
    acceptRanges: true,
    filename: 'file.bin',
  };
  return { store, file };
}

const check = (store: FileStore, file: RemoteFile, old: Mirror, newUrl: string) =>
  checkRelink({ store, jobId: 'job', file, knownUrl: old.url, newUrl, options: DEFAULT_OPTIONS, signal: new AbortController().signal });

/** The Range header of the samples compared over `stored`, in order. */
const sampleHeaders = (stored: ByteRange[]) => sampleRanges(stored).map((r) => `bytes=${r.start}-${r.end - 1}`);

/** Requests that asked for bytes already stored. */
const refetched = (m: Mirror) => m.stats.requests.filter((r) => Number(/bytes=(\d+)-/.exec(r.range ?? '')?.[1] ?? 0) < STORED);

describe('checkRelink', () => {
  it('trusts the validators on the same origin: same size and ETag keep the stored bytes, no stored byte asked for', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const { store, file } = await storedJob(old);
    const verdict = await check(store, file, old, `${old.url}?token=renewed`);
    expect(verdict).toEqual({ same: true, file: { ...file } });
    expect(old.stats.requests.map((r) => r.range)).toEqual([`bytes=${STORED}-${STORED}`]);
    expect(refetched(old)).toEqual([]);
  });

  it('refuses another version on the same origin: the same size with another ETag', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const { store, file } = await storedJob(old);
    old.setContent({ seed: 61, etag: '"v2"' });
    expect(await check(store, file, old, `${old.url}?token=renewed`)).toEqual({
      same: false,
      reason: expect.stringMatching(/another version/),
      mismatch: { kind: 'version' },
    });
  });

  it('refuses another size, in plain words', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const other = await bed.mirror({ size: SIZE + 1, seed: 61, etag: null, lastModified: null });
    const { store, file } = await storedJob(old);
    expect(await check(store, file, old, other.url)).toEqual({
      same: false,
      reason: expect.stringMatching(/^the new address serves 4\.19 MB, not the 4\.19 MB of this download$/),
      mismatch: { kind: 'size', size: SIZE + 1, expected: SIZE },
    });
  });

  describe('another server (nginx and Apache derive ETag and Last-Modified from mtime and size)', () => {
    const NGINX = { etag: '"65f00a80-400000"', lastModified: 'Tue, 12 Mar 2024 08:00:00 GMT' };
    // Bytes [1.5, 2.5) MiB hold the only difference between the two builds.
    const build1 = contentBytes(61, 0, SIZE);
    const build2 = Uint8Array.from(build1);
    build2.set(contentBytes(62, 1.5 * MiB, 2.5 * MiB), 1.5 * MiB);
    // Stored in pieces, as a download from several mirrors leaves them.
    const stored = [
      { start: 0, end: 1 * MiB },
      { start: 1.25 * MiB, end: 2.75 * MiB },
      { start: 3 * MiB, end: 3.5 * MiB },
    ];
    const probe = `bytes=${1 * MiB}-${1 * MiB}`;

    it('refuses a different build of the same size under equal validators: the stored middle differs', async () => {
      const old = await bed.mirror({ size: SIZE, body: build1, ...NGINX });
      const rebuilt = await bed.mirror({ size: SIZE, body: build2, ...NGINX });
      const { store, file } = await storedJob(old, stored, build1);
      expect(file).toMatchObject(NGINX);

      const verdict = await check(store, file, old, rebuilt.url);
      expect(verdict).toEqual({
        same: false,
        reason: 'the new address sends other bytes at 1.82 MB than the ones stored',
        mismatch: { kind: 'bytes', at: 1.75 * MiB - 16 * 1024 },
      });
      // The probe, then samples up to the middle one of the stored bytes, inside the difference (the ends would not see it).
      const samples = sampleHeaders(stored);
      expect(rebuilt.stats.requests.map((r) => r.range)).toEqual([probe, ...samples.slice(0, 5)]);
      expect(samples[4]).toBe(`bytes=${1.75 * MiB - 16 * 1024}-${1.75 * MiB + 16 * 1024 - 1}`);
      expect(rebuilt.stats.requests.slice(1).every((r) => r.ifRange === NGINX.etag)).toBe(true);
    });

    it('keeps the stored bytes when the same build is at another origin, having compared samples spread over every stored range', async () => {
      const old = await bed.mirror({ size: SIZE, body: build1, ...NGINX });
      const copy = await bed.mirror({ size: SIZE, body: build1, etag: '"other-server"', lastModified: null });
      const { store, file } = await storedJob(old, stored, build1);

      const verdict = await check(store, file, old, copy.url);
      // It goes on with the new server's own validators.
      expect(verdict).toEqual({ same: true, file: { ...file, etag: '"other-server"', lastModified: undefined } });
      const samples = sampleHeaders(stored);
      expect(samples).toHaveLength(9);
      expect(copy.stats.requests.map((r) => r.range)).toEqual([probe, ...samples]);
      expect(copy.stats.requests.slice(1).every((r) => r.ifRange === '"other-server"')).toBe(true);
      for (const range of stored) expect(sampleRanges(stored).some((s) => s.start >= range.start && s.end <= range.end)).toBe(true);
    });
  });

  it('without validators, compares samples of the stored bytes: the same bytes pass, others do not', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61, etag: null, lastModified: null });
    const same = await bed.mirror({ size: SIZE, seed: 61, etag: null, lastModified: null });
    const other = await bed.mirror({ size: SIZE, seed: 62, etag: null, lastModified: null });
    const { store, file } = await storedJob(old);
    expect(await check(store, file, old, same.url)).toMatchObject({ same: true });
    expect(same.stats.requests.map((r) => r.range)).toEqual([`bytes=${STORED}-${STORED}`, ...sampleHeaders([{ start: 0, end: STORED }])]);
    expect(await check(store, file, old, other.url)).toEqual({
      same: false,
      reason: expect.stringMatching(/other bytes at 0 B/),
      mismatch: { kind: 'bytes', at: 0 },
    });
  });

  it('says so when the new address does not send parts of the file', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const whole = await bed.mirror({ size: SIZE, seed: 61, faults: { acceptRangesNone: true } });
    const { store, file } = await storedJob(old);
    expect(await check(store, file, old, whole.url)).toEqual({
      same: false,
      reason: expect.stringMatching(/answered 200 OK instead of sending part/),
      mismatch: { kind: 'status', status: 200 },
    });
  });
});
