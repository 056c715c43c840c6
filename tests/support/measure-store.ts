import { createHash, randomFillSync } from 'node:crypto';
import type { DownloadStore } from '../../src/engine/store';

export interface ThroughputResult {
  /** Megabytes (10^6 bytes) written per second. */
  mbPerSec: number;
  seconds: number;
  /** SHA-256 (hex) of the bytes written, to check a read-back against. */
  sha256: string;
}

/**
 * Writes `totalBytes` of random data to `jobId` the way the engine does: blockSize records with
 * writeConcurrency writes in flight. Only the writes are timed, not generating the data.
 */
export async function measureStoreThroughput(store: DownloadStore, totalBytes: number, jobId = 'throughput'): Promise<ThroughputResult> {
  const data = new Uint8Array(totalBytes);
  for (let i = 0; i < totalBytes; i += 1 << 30) randomFillSync(data, i, Math.min(1 << 30, totalBytes - i));
  const sha256 = createHash('sha256').update(data).digest('hex');
  let next = 0;
  const writer = async (): Promise<void> => {
    while (next < totalBytes) {
      const offset = next;
      next += store.blockSize;
      await store.writeBlock(jobId, offset, data.subarray(offset, Math.min(totalBytes, offset + store.blockSize)));
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: store.writeConcurrency }, writer));
  const seconds = (performance.now() - started) / 1000;
  return { mbPerSec: totalBytes / 1e6 / seconds, seconds, sha256 };
}

/** SHA-256 (hex) of the stored bytes [start, end), read through the store's own read(). */
export async function sha256OfStored(store: DownloadStore, jobId: string, start: number, end: number): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of store.read(jobId, start, end)) hash.update(chunk);
  return hash.digest('hex');
}
