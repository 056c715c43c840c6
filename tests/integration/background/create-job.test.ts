/**
 * The extension's settings reach the engine through createJob: a per-site override of the most
 * connections is what a server sees, and an override for another site leaves it alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createJob } from '../../../src/background/jobs/create-job';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/settings/schema';
import { FileStore } from '../../../src/storage/file-store';
import { contentSha256 } from '../../support/content';
import { storedSha256 } from '../../support/engine-run';
import { startMirror } from '../../support/mirror-server';

const MB = 1_000_000;
const MiB = 1024 * 1024;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Downloads from a server that caps each connection (so more connections pay) with these settings. */
async function download(connectionsPerSite: Record<string, number>) {
  const size = 4 * MiB;
  const seed = 140;
  const server = await startMirror({ size, seed, rate: 16 * MB, connectionRate: 4 * MB, latencyMs: 20 });
  closers.push(() => server.close());
  const dir = await mkdtemp(join(tmpdir(), 'stitch-create-job-'));
  const store = new FileStore(dir);
  closers.push(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const settings = parseSettings({ ...DEFAULT_SETTINGS, connectionsPerServer: 6, connectionsPerSite });
  const job = await createJob(store, 'job', { url: server.url, mirrors: [], credentials: 'omit', cookieOrigins: [] }, settings);
  const result = await job.run();
  expect(result.status).toBe('complete');
  expect(await storedSha256(store, 'job', size)).toBe(await contentSha256(seed, size));
  return server.stats.peakConnections;
}

describe('createJob', () => {
  it('opens one connection at a time to a site whose override is 1', async () => {
    expect(await download({ '127.0.0.1': 1 })).toBe(1);
  });

  it('leaves other sites at the most connections per server (it starts with two)', async () => {
    expect(await download({ 'downloads.example.com': 1 })).toBeGreaterThanOrEqual(2);
  });
});
