import { createHash, randomBytes } from 'node:crypto';
import * as fake from 'fake-indexeddb';
import { describe, expect, it, vi } from 'vitest';
import { createWasmHasher } from '../../src/background/jobs/wasm-hasher';
import type { DigestAlgorithm } from '../../src/engine';
import { PrefixHasher } from '../../src/engine/integrity/prefix-hasher';
import { openIdbStore } from '../../src/storage/idb-store';
import { useFakeIdbGlobals } from '../support/fake-idb-globals';

const NODE_NAME: Record<DigestAlgorithm, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512', 'sha-1': 'sha1', md5: 'md5' };
const nodeHex = (algorithm: DigestAlgorithm, data: Uint8Array) => createHash(NODE_NAME[algorithm]).update(data).digest('hex');
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('createWasmHasher', () => {
  // First: hash-wasm keeps a module once compiled, so this must be the first SHA-1 of the file.
  it('hashes in JavaScript when WebAssembly is refused (a CSP without wasm-unsafe-eval)', async () => {
    const refused = () => Promise.reject(new WebAssembly.CompileError('WebAssembly.compile(): refused by the CSP'));
    vi.stubGlobal('WebAssembly', { compile: refused, instantiate: refused });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const hasher = await createWasmHasher('sha-1');
      hasher.update(new Uint8Array([1, 2, 3]));
      expect(hex(hasher.digest())).toBe(nodeHex('sha-1', new Uint8Array([1, 2, 3])));
      expect(warn).toHaveBeenCalledOnce();
    } finally {
      vi.unstubAllGlobals();
      warn.mockRestore();
    }
  });

  it.each(Object.keys(NODE_NAME) as DigestAlgorithm[])('%s over uneven chunks matches node:crypto', async (algorithm) => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const hasher = await createWasmHasher(algorithm);
    // Chunk sizes straddle the hash's block size and hash-wasm's internal buffer.
    for (let pos = 0, step = 1; pos < data.length; pos += step, step = (step * 7 + 13) % 300_001) {
      hasher.update(data.subarray(pos, pos + step));
    }
    expect(hex(hasher.digest())).toBe(nodeHex(algorithm, data));
  });

  it('keeps two hashers of one algorithm apart', async () => {
    const [a, b] = [await createWasmHasher('sha-256'), await createWasmHasher('sha-256')];
    a.update(new Uint8Array([1, 2, 3]));
    b.update(new Uint8Array([4, 5]));
    expect(hex(a.digest())).toBe(nodeHex('sha-256', new Uint8Array([1, 2, 3])));
    expect(hex(b.digest())).toBe(nodeHex('sha-256', new Uint8Array([4, 5])));
  });
});

describe('PrefixHasher with an asynchronous factory', () => {
  useFakeIdbGlobals();

  it('hashes the prefix as it grows, and again from zero after a reset', async () => {
    const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'bytes' });
    const data = randomBytes(5 * 1024 * 1024);
    const hasher = new PrefixHasher(store, 'job', 'sha-256', createWasmHasher);
    await store.writeBlock('job', 0, data.subarray(0, 2 * 1024 * 1024));
    await hasher.advance();
    hasher.reset();
    await store.writeBlock('job', 2 * 1024 * 1024, data.subarray(2 * 1024 * 1024));
    expect(await hasher.finish(data.length)).toBe(nodeHex('sha-256', data));
    expect(await new PrefixHasher(store, 'empty', 'sha-256', createWasmHasher).finish(0)).toBe(nodeHex('sha-256', new Uint8Array(0)));
    store.close();
  });
});
