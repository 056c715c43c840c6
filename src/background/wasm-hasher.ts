import { createMD5, createSHA1, createSHA256, createSHA512, type IHasher } from 'hash-wasm';
import type { DigestAlgorithm, Hasher } from '../engine';

const CREATE: Record<DigestAlgorithm, () => Promise<IHasher>> = {
  'sha-256': createSHA256,
  'sha-512': createSHA512,
  'sha-1': createSHA1,
  md5: createMD5,
};

/**
 * The extension's streaming hashes: hash-wasm's WebAssembly builds, several times faster than the
 * engine's pure-JS default (the extension CSP allows them with 'wasm-unsafe-eval'). Imported
 * statically because Chrome's service worker refuses import(); each module is compiled on its
 * first use only, so a job without a digest never pays for it.
 */
export async function createWasmHasher(algorithm: DigestAlgorithm): Promise<Hasher> {
  const hash = await CREATE[algorithm]();
  return {
    update(bytes) {
      hash.update(bytes);
    },
    digest: () => hash.digest('binary'),
  };
}
