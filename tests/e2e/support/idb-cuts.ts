/**
 * Writes and discards that cut IdbStore records apart, shared by the test (which models the
 * bytes they leave) and the page that runs them against the browser's own IndexedDB.
 */
export type Cut = { kind: 'write'; offset: number; length: number; generation: number } | { kind: 'discard'; start: number; end: number };

const MiB = 1024 * 1024;

export const CUTS: readonly Cut[] = [
  // One 4 MiB record, and one over its end reaching into the next 4 MiB.
  { kind: 'write', offset: 0, length: 4 * MiB, generation: 1 },
  { kind: 'write', offset: 3.5 * MiB, length: 1.5 * MiB, generation: 4 },
  // A hole in the first record's middle: a head and a tail are kept.
  { kind: 'discard', start: 1 * MiB, end: 2 * MiB },
  // The kept tail is cut again by a write and by a discard: parts of parts.
  { kind: 'write', offset: 3 * MiB, length: MiB / 2, generation: 2 },
  { kind: 'discard', start: 2.5 * MiB, end: 2.75 * MiB },
  // A smaller record over the start of the kept head (a player's short record).
  { kind: 'write', offset: 100_000, length: 64 * 1024, generation: 3 },
  // A hole across the 4 MiB mark: two records cut at once.
  { kind: 'discard', start: 3.875 * MiB, end: 4.25 * MiB },
];

/** Bytes of one write: they depend on the position and the write, so bytes read from the wrong place differ. */
export function writeBytes(cut: Extract<Cut, { kind: 'write' }>): Uint8Array {
  const bytes = new Uint8Array(cut.length);
  for (let i = 0; i < cut.length; i++) {
    const at = cut.offset + i;
    bytes[i] = (at * 31 + (at >>> 10) * 7 + cut.generation * 101) & 255;
  }
  return bytes;
}
