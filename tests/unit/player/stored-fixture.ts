import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { StoredReader } from '../../../src/player/mse/segments';

/** A committed media fixture's bytes. */
export const fixture = (name: string) => new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../fixtures', name)));

/** Every byte stored; records which ranges were read. */
export function reader(bytes: Uint8Array): StoredReader & { reads: [number, number][] } {
  const reads: [number, number][] = [];
  return {
    size: bytes.length,
    reads,
    async read(start, end) {
      reads.push([start, end]);
      return bytes.slice(start, Math.min(end, bytes.length));
    },
    readAvailable(start, end) {
      return this.read(start, end);
    },
  };
}
