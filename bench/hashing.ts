/**
 * SHA-256 throughput of the hasher the extension uses (@noble/hashes, pure JS) against Node's
 * native one (OpenSSL) as the reference, in the same run: `npm run bench:hash`. Prints the median
 * of the runs in MB/s (10^6 bytes) and checks that both give the same digest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createHasher } from '../src/engine/integrity/hasher';

const CHUNK = new Uint8Array(randomBytes(1 << 20));
const CHUNKS = 256;
const RUNS = 5;

function timed(hash: () => string): { seconds: number; hex: string } {
  const start = performance.now();
  const hex = hash();
  return { seconds: (performance.now() - start) / 1000, hex };
}

function noble(): string {
  const h = createHasher('sha-256');
  for (let i = 0; i < CHUNKS; i++) h.update(CHUNK);
  return Buffer.from(h.digest()).toString('hex');
}

function node(): string {
  const h = createHash('sha256');
  for (let i = 0; i < CHUNKS; i++) h.update(CHUNK);
  return h.digest('hex');
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sides: [string, () => string][] = [
  ['@noble/hashes (extension)', noble],
  ['node:crypto (reference)', node],
];
const rates = new Map<string, number[]>(sides.map(([name]) => [name, []]));
const digests = new Set<string>();
for (let run = 0; run < RUNS; run++) {
  // Alternate the order so neither side always runs second, on a warmer machine.
  for (const [name, hash] of run % 2 === 0 ? sides : [...sides].reverse()) {
    const { seconds, hex } = timed(hash);
    digests.add(hex);
    rates.get(name)!.push((CHUNKS * CHUNK.length) / 1e6 / seconds);
  }
}
if (digests.size !== 1) throw new Error('the two SHA-256 implementations disagree');
console.log(`SHA-256 over ${CHUNKS} MiB, median of ${RUNS} runs:`);
for (const [name, values] of rates) console.log(`  ${name.padEnd(26)} ${median(values).toFixed(0)} MB/s`);
