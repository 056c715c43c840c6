import { createHash } from 'node:crypto';

/**
 * Deterministic test content of any size, never stored: byte i of the content with seed s depends
 * only on (s, i). The bytes are generated in chunks of CONTENT_CHUNK, each by a xorshift128 stream
 * seeded by a hash of (seed, chunk index), so any range can be produced without its prefix.
 * Seeds are integers (|seed| < 2^53). Words are laid out in host byte order (little-endian on
 * every machine this project runs on).
 */
export const CONTENT_CHUNK = 64 * 1024;

const WORDS = CONTENT_CHUNK / 4;
const TWO_32 = 2 ** 32;

/** murmur3's 32-bit finalizer: a bijection with good avalanche. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Writes chunk `chunkIndex` of the content with `seed` into `out` (WORDS words). */
function fillChunk(seed: number, chunkIndex: number, out: Uint32Array): void {
  let h = mix32((seed >>> 0) ^ 0x243f6a88);
  h = mix32(h ^ (Math.floor(seed / TWO_32) >>> 0) ^ 0x85a308d3);
  h = mix32(h ^ (chunkIndex >>> 0) ^ 0x13198a2e);
  h = mix32(h ^ (Math.floor(chunkIndex / TWO_32) >>> 0) ^ 0x03707344);
  // Four distinct inputs to a bijection: the state is never all zero.
  let x = mix32(h + 0x9e3779b9);
  let y = mix32(h + 0x3c6ef372);
  let z = mix32(h + 0xdaa66d2b);
  let w = mix32(h + 0x78dde6e4);
  for (let i = 0; i < WORDS; i++) {
    const t = x ^ (x << 11);
    x = y;
    y = z;
    z = w;
    w = w ^ (w >>> 19) ^ (t ^ (t >>> 8));
    out[i] = w;
  }
}

// One chunk kept for unaligned reads, so sequential small reads don't regenerate it.
const scratchWords = new Uint32Array(WORDS);
const scratchBytes = new Uint8Array(scratchWords.buffer);
let scratchSeed = NaN;
let scratchIndex = -1;

function cachedChunk(seed: number, chunkIndex: number): Uint8Array {
  if (scratchSeed !== seed || scratchIndex !== chunkIndex) {
    fillChunk(seed, chunkIndex, scratchWords);
    scratchSeed = seed;
    scratchIndex = chunkIndex;
  }
  return scratchBytes;
}

function checkRange(start: number, end: number): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new RangeError(`bad content range [${start}, ${end})`);
  }
}

/** The bytes [start, end) of the content with `seed`, in a fresh array. */
export function contentBytes(seed: number, start: number, end: number): Uint8Array {
  checkRange(start, end);
  const out = new Uint8Array(end - start);
  let pos = start;
  while (pos < end) {
    const index = Math.floor(pos / CONTENT_CHUNK);
    const chunkStart = index * CONTENT_CHUNK;
    const stop = Math.min(chunkStart + CONTENT_CHUNK, end);
    const at = pos - start;
    if (pos === chunkStart && stop - pos === CONTENT_CHUNK && (at & 3) === 0) {
      fillChunk(seed, index, new Uint32Array(out.buffer, at, WORDS));
    } else {
      out.set(cachedChunk(seed, index).subarray(pos - chunkStart, stop - chunkStart), at);
    }
    pos = stop;
  }
  return out;
}

/** Hex SHA-256 of the first `size` bytes of the content with `seed`; memory stays bounded. */
export async function contentSha256(seed: number, size: number): Promise<string> {
  checkRange(0, size);
  const hash = createHash('sha256');
  const words = new Uint32Array(WORDS);
  const bytes = new Uint8Array(words.buffer);
  const chunks = Math.ceil(size / CONTENT_CHUNK);
  for (let index = 0; index < chunks; index++) {
    fillChunk(seed, index, words);
    const length = Math.min(CONTENT_CHUNK, size - index * CONTENT_CHUNK);
    hash.update(length === CONTENT_CHUNK ? bytes : bytes.subarray(0, length));
    // Let the event loop breathe every 16 MiB so a server in this process keeps serving.
    if ((index & 255) === 255) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return hash.digest('hex');
}
