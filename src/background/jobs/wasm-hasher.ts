import { createMD5, createSHA1, createSHA256, createSHA512, type IHasher } from 'hash-wasm';
import { DEFAULT_OPTIONS, type DigestAlgorithm, type Hasher } from '../../engine';

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
  let hash: IHasher;
  try {
    hash = await CREATE[algorithm]();
  } catch (error) {
    // WebAssembly refused (a CSP without 'wasm-unsafe-eval', a policy): slower, but still right.
    warnOnce(error);
    return DEFAULT_OPTIONS.createHasher(algorithm);
  }
  return {
    update(bytes) {
      hash.update(bytes);
    },
    digest: () => hash.digest('binary'),
  };
}

let warned = false;
function warnOnce(error: unknown): void {
  if (!warned) console.warn('Stitch: WebAssembly hashing is unavailable, hashing in JavaScript instead', error);
  warned = true;
}
