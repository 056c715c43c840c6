import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkRelink, DEFAULT_OPTIONS, type RemoteFile } from '../../src/engine';
import { FileStore } from '../../src/storage/file-store';
import { contentBytes } from '../support/content';
import type { Mirror } from '../support/mirror-server';
import { MiB, useTestBed } from '../support/test-bed';

const bed = useTestBed();
const SIZE = 4 * MiB;
const STORED = 1536 * 1024; // bytes [0, STORED) of seed 61 are stored

/** A store holding the first STORED bytes of the file of `seed`, and what the job knew of it. */
async function storedJob(old: Mirror): Promise<{ store: FileStore; file: RemoteFile }> {
  const dir = await mkdtemp(join(tmpdir(), 'stitch-relink-'));
  const store = new FileStore(dir);
  bed.onCleanup(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  await store.writeBlock('job', 0, contentBytes(61, 0, STORED));
  const response = await fetch(old.url, { headers: { Range: 'bytes=0-0' } });
  await response.arrayBuffer();
  const file: RemoteFile = {
    size: SIZE,
    etag: response.headers.get('etag') ?? undefined,
    lastModified: response.headers.get('last-modified') ?? undefined,
    acceptRanges: true,
    filename: 'file.bin',
  };
  return { store, file };
}

const check = (store: FileStore, file: RemoteFile, newUrl: string) =>
  checkRelink({ store, jobId: 'job', file, newUrl, options: DEFAULT_OPTIONS, signal: new AbortController().signal });

/** Requests that asked for bytes already stored. */
const refetched = (m: Mirror) => m.stats.requests.filter((r) => Number(/bytes=(\d+)-/.exec(r.range ?? '')?.[1] ?? 0) < STORED);

describe('checkRelink', () => {
  it('keeps the stored bytes when the new address has the same size and ETag, asking for no stored byte', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const renewed = await bed.mirror({ size: SIZE, seed: 61, path: '/renewed/file.bin' });
    const { store, file } = await storedJob(old);
    const verdict = await check(store, file, renewed.url);
    expect(verdict).toEqual({ same: true, file: { ...file } });
    expect(renewed.stats.requests.map((r) => r.range)).toEqual([`bytes=${STORED}-${STORED}`]);
    expect(refetched(renewed)).toEqual([]);
  });

  it('refuses another size, in plain words', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const other = await bed.mirror({ size: SIZE + 1, seed: 61, etag: null, lastModified: null });
    const { store, file } = await storedJob(old);
    expect(await check(store, file, other.url)).toEqual({
      same: false,
      reason: expect.stringMatching(/^the new address serves 4\.19 MB, not the 4\.19 MB of this download$/),
    });
  });

  it('refuses another version: the same size with another ETag', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const changed = await bed.mirror({ size: SIZE, seed: 61, etag: '"v2"' });
    const { store, file } = await storedJob(old);
    expect(await check(store, file, changed.url)).toEqual({ same: false, reason: expect.stringMatching(/another version/) });
  });

  it('without validators, compares the first and last stored bytes: the same bytes pass, others do not', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61, etag: null, lastModified: null });
    const same = await bed.mirror({ size: SIZE, seed: 61, etag: null, lastModified: null });
    const other = await bed.mirror({ size: SIZE, seed: 62, etag: null, lastModified: null });
    const { store, file } = await storedJob(old);
    expect(await check(store, file, same.url)).toMatchObject({ same: true });
    expect(same.stats.requests.map((r) => r.range)).toEqual([
      `bytes=${STORED}-${STORED}`,
      `bytes=0-65535`,
      `bytes=${STORED - 65536}-${STORED - 1}`,
    ]);
    expect(await check(store, file, other.url)).toEqual({ same: false, reason: expect.stringMatching(/other bytes at 0 B/) });
  });

  it('says so when the new address does not send parts of the file', async () => {
    const old = await bed.mirror({ size: SIZE, seed: 61 });
    const whole = await bed.mirror({ size: SIZE, seed: 61, faults: { acceptRangesNone: true } });
    const { store, file } = await storedJob(old);
    expect(await check(store, file, whole.url)).toEqual({
      same: false,
      reason: expect.stringMatching(/answered 200 OK instead of sending part/),
    });
  });
});
