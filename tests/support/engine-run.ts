import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DownloadJob, englishNotice, type EngineOptions, type ExpectedIntegrity, type JobSnapshot } from '../../src/engine';
import { FileStore } from '../../src/storage/file-store';

/** Options that make tests fast: short stalls and backoff. */
export const FAST: Partial<EngineOptions> = {
  stallTimeoutMs: 400,
  retryBaseMs: 20,
  retryMaxMs: 200,
  progressIntervalMs: 20,
};

export interface EngineRun {
  job: DownloadJob;
  store: FileStore;
  dir: string;
  result: JobSnapshot;
  notices: string[];
  /** SHA-256 of the stored bytes [0, size), read back through the store. */
  sha256(): Promise<string>;
  cleanup(): Promise<void>;
}

/** Downloads `url` with the engine into a fresh FileStore in a temp dir. */
export async function runEngine(
  url: string,
  options: Partial<EngineOptions> = {},
  onJob?: (job: DownloadJob, store: FileStore) => void,
  mirrors: string[] = [],
  expected?: ExpectedIntegrity,
): Promise<EngineRun> {
  const dir = await mkdtemp(join(tmpdir(), 'stitch-engine-'));
  const store = new FileStore(dir);
  const job = await DownloadJob.create(store, { id: 'job', url, mirrors, expected }, { ...FAST, ...options });
  const notices: string[] = [];
  job.on('notice', (n) => notices.push(englishNotice(n)));
  onJob?.(job, store);
  const result = await job.run();
  return {
    job,
    store,
    dir,
    result,
    notices,
    sha256: () => storedSha256(store, 'job', result.size ?? 0),
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function storedSha256(store: FileStore, id: string, size: number): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of store.read(id, 0, size)) hash.update(chunk);
  return hash.digest('hex');
}
