import type { DownloadStore } from '../store';
import { bytesToHex } from './digests';
import type { PieceHashes } from './expected';
import type { HasherFactory } from './hasher';
import { SCRATCH_BYTES } from './prefix-hasher';

export interface PieceResult {
  index: number;
  start: number;
  end: number;
  ok: boolean;
}

/**
 * Verifies Metalink piece hashes as soon as each piece is fully stored, one piece at a time,
 * so a bad piece is found (and fetched again elsewhere) long before the file is complete.
 */
export class PieceChecker {
  private readonly verified = new Set<number>();
  private running: Promise<PieceResult[]> | undefined;
  /** What the store may read into: each chunk is hashed before the next is read. */
  private scratch: Uint8Array | undefined;

  constructor(
    private readonly store: DownloadStore,
    private readonly jobId: string,
    private readonly pieces: PieceHashes,
    private readonly size: number,
    private readonly createHasher: HasherFactory,
  ) {}

  get allVerified(): boolean {
    return this.verified.size === this.pieces.hashes.length;
  }

  /** Checks every stored, unverified piece; `covers` says whether a range is stored. */
  check(covers: (start: number, end: number) => boolean): Promise<PieceResult[]> {
    this.running ??= this.checkStored(covers).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Forgets verified pieces overlapping [start, end) (their bytes were discarded). */
  forget(start: number, end: number): void {
    for (const index of [...this.verified]) {
      const [s, e] = this.bounds(index);
      if (s < end && e > start) this.verified.delete(index);
    }
  }

  bounds(index: number): [number, number] {
    const start = index * this.pieces.length;
    return [start, Math.min(this.size, start + this.pieces.length)];
  }

  private async checkStored(covers: (start: number, end: number) => boolean): Promise<PieceResult[]> {
    const results: PieceResult[] = [];
    for (let index = 0; index < this.pieces.hashes.length; index++) {
      if (this.verified.has(index)) continue;
      const [start, end] = this.bounds(index);
      if (!covers(start, end)) continue;
      const hasher = await this.createHasher(this.pieces.algorithm);
      this.scratch ??= new Uint8Array(SCRATCH_BYTES);
      for await (const chunk of this.store.read(this.jobId, start, end, this.scratch)) hasher.update(chunk);
      const ok = bytesToHex(hasher.digest()) === this.pieces.hashes[index];
      if (ok) this.verified.add(index);
      results.push({ index, start, end, ok });
    }
    return results;
  }
}
