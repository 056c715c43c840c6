import * as fake from 'fake-indexeddb';
import { afterAll, beforeAll, vi } from 'vitest';

/**
 * idb recognizes IDB objects with `instanceof IDBRequest` etc. against the globals, so the
 * fake's classes must be global for the calling test file; the factory itself is passed
 * explicitly, a fresh one per store.
 */
export function useFakeIdbGlobals(): void {
  const classes = [
    'IDBCursor',
    'IDBCursorWithValue',
    'IDBDatabase',
    'IDBIndex',
    'IDBKeyRange',
    'IDBObjectStore',
    'IDBOpenDBRequest',
    'IDBRequest',
    'IDBTransaction',
  ] as const;
  beforeAll(() => {
    for (const name of classes) vi.stubGlobal(name, fake[name]);
  });
  afterAll(() => vi.unstubAllGlobals());
}
