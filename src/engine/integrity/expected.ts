import { bytesToHex, digestFromHex, normalizeDigestAlgorithm, type Digest, type DigestAlgorithm } from './digests';

/** A digest as it is persisted: JSON-friendly. */
export interface HexDigest {
  algorithm: DigestAlgorithm;
  hex: string;
  /** Who announced it, for messages: "the server", "the Metalink file", "you". */
  source: string;
}

/** Hashes of fixed-length pieces (Metalink): a bad piece is found and fetched again. */
export interface PieceHashes {
  algorithm: DigestAlgorithm;
  length: number;
  hashes: string[];
}

export function toHexDigests(digests: readonly Digest[] | undefined, source: string): HexDigest[] {
  return (digests ?? []).map((d) => ({ algorithm: d.algorithm, hex: bytesToHex(d.value), source }));
}

/** Parses "sha-256=abc…" (the CLI's --checksum), or undefined. */
export function parseChecksumArgument(text: string, source = 'you'): HexDigest | undefined {
  const at = text.indexOf('=');
  const algorithm = at > 0 ? normalizeDigestAlgorithm(text.slice(0, at)) : undefined;
  const digest = algorithm && digestFromHex(algorithm, text.slice(at + 1).trim());
  return digest ? { algorithm: digest.algorithm, hex: bytesToHex(digest.value), source } : undefined;
}

// Fastest strong hash first: SHA-256 runs ~2.5× faster than SHA-512 in pure JS.
const VERIFY_ORDER: readonly DigestAlgorithm[] = ['sha-256', 'sha-512', 'sha-1', 'md5'];

/** The algorithm to verify with: the preferred one that some source announced. */
export function verificationAlgorithm(digests: readonly HexDigest[]): DigestAlgorithm | undefined {
  return VERIFY_ORDER.find((a) => digests.some((d) => d.algorithm === a));
}

/** A message for the first announced digest of `algorithm` that `actualHex` contradicts. */
export function digestMismatch(digests: readonly HexDigest[], algorithm: DigestAlgorithm, actualHex: string): string | undefined {
  const wrong = digests.find((d) => d.algorithm === algorithm && d.hex !== actualHex);
  return wrong && `the file's ${algorithm.toUpperCase()} is ${actualHex}, but ${wrong.source} announced ${wrong.hex}`;
}

/** True when two sources announce different digests of the same algorithm. */
export function hexDigestsContradict(a: readonly HexDigest[], b: readonly HexDigest[]): boolean {
  return a.some((x) => b.some((y) => x.algorithm === y.algorithm && x.hex !== y.hex));
}
