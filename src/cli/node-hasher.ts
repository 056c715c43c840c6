import type { DigestAlgorithm, Hasher } from '../engine';
import { createHash } from 'node:crypto';

const NODE_NAMES: Record<DigestAlgorithm, string> = { 'sha-256': 'sha256', 'sha-512': 'sha512', 'sha-1': 'sha1', md5: 'md5' };

/** Node's native hashes: about ten times faster than the engine's portable ones. */
export function createNodeHasher(algorithm: DigestAlgorithm): Hasher {
  const hash = createHash(NODE_NAMES[algorithm]);
  return {
    update: (bytes) => void hash.update(bytes),
    digest: () => new Uint8Array(hash.digest()),
  };
}
