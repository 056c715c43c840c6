import type { DigestAlgorithm, Hasher } from '../engine';
import { createRequire } from 'node:module';

const NODE_NAMES: Record<DigestAlgorithm, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512', 'sha-1': 'sha1', md5: 'md5' };

// Loaded on the first hash, not at start-up: most downloads without a digest never need it, and the
// first request should not wait for it.
const require = createRequire(import.meta.url);
let crypto: typeof import('node:crypto') | undefined;

/** Node's native hashes: about ten times faster than the engine's portable ones. */
export function createNodeHasher(algorithm: DigestAlgorithm): Hasher {
  crypto ??= require('node:crypto') as typeof import('node:crypto');
  const hash = crypto.createHash(NODE_NAMES[algorithm]);
  return {
    update: (bytes) => void hash.update(bytes),
    digest: () => new Uint8Array(hash.digest()),
  };
}
