import { createHash } from 'node:crypto';
import { afterEach, beforeEach, vi } from 'vitest';
import { createNodeHasher } from '../../../src/cli/node-hasher';
import { DownloadJob, englishNotice, type EngineOptions, type JobSnapshot } from '../../../src/engine';
import { FAST } from '../../support/engine-run';
import { FakeClock } from '../../support/fake-clock';
import { MemoryStore } from '../../support/memory-store';
import { SimNetwork, type SimServer, type SimServerOptions } from '../../support/sim-network';

export const MiB = 1024 * 1024;

/** A seeded generator for the back-off's jitter, so that every run is the same. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Seeds Math.random before each test of the file (the back-off's jitter), and restores it after. */
export function seedRandomEachTest(seed = 1): void {
  beforeEach(() => {
    vi.spyOn(Math, 'random').mockImplementation(seededRandom(seed));
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
}

/** A simulated network on a fresh virtual clock, its servers started from `options` (the first one: the primary). */
export function simServers(options: SimServerOptions[]): { clock: FakeClock; network: SimNetwork; servers: SimServer[] } {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const network = new SimNetwork(clock);
  return { clock, network, servers: options.map((o) => network.serve(o)) };
}

export interface SimDownload {
  job: DownloadJob;
  store: MemoryStore;
  result: JobSnapshot;
  notices: string[];
  /** When the job started, in virtual time. */
  startedAt: number;
  /** Virtual seconds from the job's start to its end. */
  seconds: number;
  /** SHA-256 of the stored bytes [0, size). */
  sha256(): Promise<string>;
}

/**
 * Downloads `url` (and `mirrors`) with the engine's DownloadJob into a MemoryStore, over `network` in
 * virtual time, with the integration tests' options (engine-run.ts, FAST) and the CLI's hasher; `options.fetch`
 * may wrap the network's.
 */
export async function simDownload(
  network: SimNetwork,
  url: string,
  mirrors: string[] = [],
  options: Partial<EngineOptions> = {},
  onJob?: (job: DownloadJob, store: MemoryStore) => void,
  limitMs = 120_000,
): Promise<SimDownload> {
  const clock = network.clock;
  const store = new MemoryStore();
  const job = await DownloadJob.create(
    store,
    { id: 'job', url, mirrors },
    { ...FAST, createHasher: createNodeHasher, fetch: network.fetch, ...options, clock },
  );
  const notices: string[] = [];
  job.on('notice', (n) => notices.push(englishNotice(n)));
  onJob?.(job, store);
  const startedAt = clock.now();
  const result = await clock.run(job.run(), limitMs);
  const seconds = (clock.now() - startedAt) / 1000;
  return {
    job,
    store,
    result,
    notices,
    startedAt,
    seconds,
    sha256: async () => {
      const hash = createHash('sha256');
      for await (const chunk of store.read('job', 0, result.size ?? 0)) hash.update(chunk);
      return hash.digest('hex');
    },
  };
}

/** Body bytes all these servers sent. */
export const sent = (servers: SimServer[]) => servers.reduce((sum, s) => sum + s.stats.bytesSent, 0);
