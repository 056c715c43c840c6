import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type DigestAlgorithm, DIGEST_LENGTH } from '../../src/engine/integrity/digests';
import { createHasher } from '../../src/engine/integrity/hasher';

const NODE_NAME: Record<DigestAlgorithm, string> = {
  'sha-256': 'sha256',
  'sha-512': 'sha512',
  'sha-1': 'sha1',
  md5: 'md5',
};
const ALGORITHMS = Object.keys(NODE_NAME) as DigestAlgorithm[];
const nodeDigest = (algorithm: DigestAlgorithm, data: Uint8Array) => createHash(NODE_NAME[algorithm]).update(data).digest('hex');
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** Deterministic PRNG so a failure can be reproduced. */
function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('createHasher', () => {
  it.each<[DigestAlgorithm, string, string]>([
    ['sha-256', '', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['sha-256', 'abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['sha-1', 'abc', 'a9993e364706816aba3e25717850c26c9cd0d89d'],
    ['md5', 'abc', '900150983cd24fb0d6963f7d28e17f72'],
    [
      'sha-512',
      'abc',
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a' +
        '2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    ],
  ])('%s(%j) matches the published test vector', (algorithm, text, expected) => {
    const h = createHasher(algorithm);
    h.update(new TextEncoder().encode(text));
    expect(hex(h.digest())).toBe(expected);
  });

  it.each(ALGORITHMS)('%s has the expected digest length', (algorithm) => {
    expect(createHasher(algorithm).digest()).toHaveLength(DIGEST_LENGTH[algorithm]);
  });

  it.each(ALGORITHMS)('%s matches node:crypto over random chunk boundaries', (algorithm) => {
    const rand = mulberry32(ALGORITHMS.indexOf(algorithm) + 1);
    for (let trial = 0; trial < 20; trial++) {
      const size = trial < 4 ? [0, 1, 63, 64][trial]! : Math.floor(rand() * 300_000);
      const data = new Uint8Array(randomBytes(size));
      const h = createHasher(algorithm);
      for (let at = 0; at < size;) {
        // Mostly small chunks (block-boundary edge cases), sometimes empty, sometimes large.
        const r = rand();
        const len = r < 0.1 ? 0 : r < 0.8 ? Math.floor(rand() * 200) : Math.floor(rand() * 70_000);
        h.update(data.subarray(at, at + len));
        at += len;
      }
      expect(hex(h.digest()), `size ${size}`).toBe(nodeDigest(algorithm, data));
    }
  });

  it('hashers are independent', () => {
    const a = createHasher('sha-256');
    const b = createHasher('sha-256');
    a.update(new Uint8Array([1]));
    b.update(new Uint8Array([2]));
    expect(hex(a.digest())).toBe(nodeDigest('sha-256', new Uint8Array([1])));
    expect(hex(b.digest())).toBe(nodeDigest('sha-256', new Uint8Array([2])));
  });

  it('does not keep a reference to the caller’s buffer', () => {
    const buf = new Uint8Array([1, 2, 3]);
    const h = createHasher('sha-1');
    h.update(buf);
    buf.fill(0);
    expect(hex(h.digest())).toBe(nodeDigest('sha-1', new Uint8Array([1, 2, 3])));
  });
});
