import { expect, test } from 'vitest';
import type { JobMeta } from '../../../src/background/jobs/job-meta';
import type { JobSaver } from '../../../src/background/saving/job-saver';
import { JobSaving, type JobEntry } from '../../../src/background/saving/job-saving';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/settings/schema';

/** A complete job whose streamed save (Chrome) ends without the file, `orphaned` bytes of it released behind the browser. */
async function streamedSaveFails(orphaned: number) {
  const meta = { id: 'j1', saveAs: false, pausedByUser: false, createdAt: 0 } as unknown as JobMeta;
  const entry = {
    job: { id: 'j1', state: { status: 'complete' }, snapshot: () => ({ size: 300, url: 'https://example.com/f.bin', filename: 'f.bin' }) },
    meta,
    storedBytes: 300,
    holds: 0,
    bytesFreed: false,
  } as unknown as JobEntry;
  const calls: string[] = [];
  const saver = {
    streams: true,
    startStreamed: async () => (calls.push('streamed'), 7),
    start: async () => (calls.push('blob'), { id: 8 }),
    finished: async (id: number) => (id === 7 ? { ok: false as const, error: 'the download stopped' } : { ok: true as const }),
    cancel: async (id: number) => void calls.push(`cancel ${id}`),
  } as unknown as JobSaver;
  const saving = new JobSaving({
    saver,
    settings: () => parseSettings({ ...DEFAULT_SETTINGS, saveWhileDownloading: true }),
    updateMeta: async (e, change) => void (e.meta = { ...e.meta, ...change }),
    freeBytes: async () => void calls.push('free'),
    diskFree: async () => undefined,
    orphaned: () => orphaned,
    refetch: async () => void calls.push('refetch'),
    tracks: () => true,
    savingChanged: () => {},
  });
  await saving.save(entry);
  return { calls, entry };
}

test('a streamed save that ends without the file after the store gave back its bytes: the job fetches them again, no blob save is tried', async () => {
  const { calls, entry } = await streamedSaveFails(64 * 1024 * 1024);
  expect(calls).toEqual(['streamed', 'cancel 7', 'refetch']);
  expect(entry.meta.save).toBeUndefined();
});

test('with nothing released, a complete job whose streamed save broke is saved again from the store, once', async () => {
  const { calls } = await streamedSaveFails(0);
  expect(calls).toEqual(['streamed', 'cancel 7', 'streamed', 'cancel 7']);
});
