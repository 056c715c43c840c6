/**
 * Streaming hashes over downloaded chunks. crypto.subtle only hashes a whole buffer at once, which
 * would mean holding the file in memory, so this uses @noble/hashes (audited, pure JS). Only the
 * submodules needed are imported to keep the extension bundle small.
 */
import { md5, sha1 } from '@noble/hashes/legacy.js';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import type { DigestAlgorithm } from './digests';

export interface Hasher {
  update(bytes: Uint8Array): void;
  /** The digest of everything passed to `update`; the hasher cannot be used afterwards. */
  digest(): Uint8Array;
}

/**
 * Makes a streaming hash. A platform may load its hash lazily (the extension's WebAssembly
 * SHA-256), so the factory may answer with a promise.
 */
export type HasherFactory = (algorithm: DigestAlgorithm) => Hasher | Promise<Hasher>;

const CONSTRUCTORS = { 'sha-256': sha256, 'sha-512': sha512, 'sha-1': sha1, md5 } as const;

export function createHasher(algorithm: DigestAlgorithm): Hasher {
  const h = CONSTRUCTORS[algorithm].create();
  return {
    update(bytes) {
      h.update(bytes);
    },
    digest: () => h.digest(),
  };
}
