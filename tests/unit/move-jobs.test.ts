import * as fake from 'fake-indexeddb';
import { expect, it } from 'vitest';
import { openIdbStore } from '../../src/storage/idb-store';
import { moveJobs } from '../../src/storage/move-jobs';
import { useFakeIdbGlobals } from '../support/fake-idb-globals';
import { equalBytes, pattern, readAll } from '../support/store-contract';

useFakeIdbGlobals();

const MiB = 1024 * 1024;

it('moves every job, bytes and state, and leaves nothing behind; moving again is harmless', async () => {
  const from = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'bytes' });
  const to = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'bytes' });
  const bytes = pattern(7, 9 * MiB);
  // Two stored ranges with a hole between them, over several records.
  await from.writeBlock('a', 0, bytes.subarray(0, 5 * MiB));
  await from.writeBlock('a', 6 * MiB, bytes.subarray(6 * MiB));
  await from.saveState('a', { url: 'https://example.com/a' });
  await from.saveState('b', { url: 'https://example.com/b' });

  expect(await moveJobs(from, to)).toBe(2);

  expect(await to.listJobs()).toEqual(['a', 'b']);
  expect(await to.loadState('a')).toEqual({ url: 'https://example.com/a' });
  expect(await to.storedRanges('a')).toEqual([
    { start: 0, end: 5 * MiB },
    { start: 6 * MiB, end: 9 * MiB },
  ]);
  expect(equalBytes(await readAll(to, 'a', 0, 5 * MiB), bytes.subarray(0, 5 * MiB))).toBe(true);
  expect(equalBytes(await readAll(to, 'a', 6 * MiB, 9 * MiB), bytes.subarray(6 * MiB))).toBe(true);
  expect(await from.listJobs()).toEqual([]);
  expect(await from.storedRanges('a')).toEqual([]);
  expect(await moveJobs(from, to)).toBe(0);
});
