import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DownloadJob, type JobStateRecord } from '../../src/engine';
import { FileStore } from '../../src/storage/file-store';

/** A FileStore whose state saves wait for `release` and can be made to fail, counting them. */
class GatedStore extends FileStore {
  saves: JobStateRecord[] = [];
  failNext = false;
  private gate: Promise<void> = Promise.resolve();
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open?.();
  }

  override async saveState(jobId: string, state: JobStateRecord): Promise<void> {
    await this.gate;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('disk said no');
    }
    this.saves.push(state);
    return super.saveState(jobId, state);
  }
}

let dir: string;
let store: GatedStore;
beforeEach(async () => {
  dir = await fs.mkdtemp(join(tmpdir(), 'stitch-job-persist-'));
  store = new GatedStore(dir);
});
afterEach(async () => {
  await store.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const expected = (size: number) => ({ size, digests: [] });

describe('DownloadJob state saves', () => {
  it('merges the changes made while a save is under way into one save', async () => {
    const job = await DownloadJob.create(store, { id: 'job', url: 'http://127.0.0.1:1/f' });
    store.saves = [];
    store.hold();
    const changes = Array.from({ length: 50 }, (_, i) => job.setExpected(expected(i + 1)));
    store.release();
    await Promise.all(changes);
    expect(store.saves.length).toBeLessThanOrEqual(2);
    expect((await store.loadState('job'))!.expected).toEqual(expected(50));
  });

  it('tries a failed save again with the next change', async () => {
    const job = await DownloadJob.create(store, { id: 'job', url: 'http://127.0.0.1:1/f' });
    store.hold();
    store.failNext = true;
    const first = job.setExpected(expected(1));
    const second = job.setExpected(expected(2));
    store.release();
    await expect(first).rejects.toThrow('disk said no');
    await second;
    expect((await store.loadState('job'))!.expected).toEqual(expected(2));
  });
});
