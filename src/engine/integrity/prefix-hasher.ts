import type { DownloadStore } from '../store';
import { contiguousPrefix, normalizeRanges, type ByteRange } from '../ranges';
import { bytesToHex, type DigestAlgorithm } from './digests';
import { createHasher, type Hasher, type HasherFactory } from './hasher';

/** Bytes read back from the store at once. */
export const SCRATCH_BYTES = 256 * 1024;

/**
 * Hashes the file in order while it downloads, reading back the stored prefix as it grows
 * (told by the job's `stored` events), so that verifying a finished multi-gigabyte file costs
 * only its last few blocks.
 */
export class PrefixHasher {
  /** Made on first use: the factory may be asynchronous. */
  private hasher: Hasher | undefined;
  private hashed = 0;
  private generation = 0;
  private busy: Promise<void> = Promise.resolve();
  /** Stored ranges: read from the store once, then kept up to date by `stored`. */
  private ranges: ByteRange[] | undefined;
  /** What the store may read into: hashing consumes each chunk before asking for the next. */
  private scratch: Uint8Array | undefined;

  constructor(
    private readonly store: DownloadStore,
    private readonly jobId: string,
    readonly algorithm: DigestAlgorithm,
    private readonly create: HasherFactory = createHasher,
  ) {}

  /** Forgets what was hashed: stored bytes were discarded or replaced. */
  reset(): void {
    this.generation++;
    this.hasher = undefined;
    this.hashed = 0;
    this.ranges = undefined;
  }

  /** Bytes [start, end) were stored: hashes on when they extend the prefix. */
  stored(start: number, end: number): Promise<void> {
    if (!this.ranges) return this.advance();
    this.ranges = normalizeRanges([...this.ranges, { start, end }]);
    return contiguousPrefix(this.ranges) > this.hashed ? this.advance() : this.busy;
  }

  /** Hashes whatever new prefix is stored; calls never overlap. */
  advance(): Promise<void> {
    this.busy = this.busy.then(() => this.hashStoredPrefix()).catch(() => this.reset());
    return this.busy;
  }

  /** The digest of [0, size), hashing what is left. */
  async finish(size: number): Promise<string> {
    await this.advance();
    if (this.hashed !== size) {
      // Something reset us midway: hash everything again.
      this.reset();
      await this.advance();
    }
    if (this.hashed !== size) throw new Error(`only ${this.hashed} of ${size} bytes could be hashed`);
    return bytesToHex((this.hasher ?? (await this.create(this.algorithm))).digest());
  }

  private async hashStoredPrefix(): Promise<void> {
    const generation = this.generation;
    this.ranges ??= normalizeRanges(await this.store.storedRanges(this.jobId));
    const prefix = contiguousPrefix(this.ranges);
    if (prefix <= this.hashed) return;
    const hasher = this.hasher ?? (await this.create(this.algorithm));
    if (generation !== this.generation) return;
    this.hasher = hasher;
    this.scratch ??= new Uint8Array(SCRATCH_BYTES);
    for await (const chunk of this.store.read(this.jobId, this.hashed, prefix, this.scratch)) {
      if (generation !== this.generation) return;
      hasher.update(chunk);
      this.hashed += chunk.length;
    }
  }
}
