import type { DownloadStore } from './store';
import { WriteGate } from './write-gate';

/**
 * Buffers one stream of bytes into block records aligned to the store's block size and writes
 * them through a gate shared by the job's streams, so memory stays bounded by
 * (streams + gate limit) × blockSize however large the file.
 */
export class BlockWriter {
  private buffer: Uint8Array | undefined;
  private filled = 0;
  private blockStart = 0;
  private end: number | undefined;
  private readonly pending = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;
  /** Bytes whose write has resolved: they survive the process dying. */
  stored = 0;
  /**
   * Smaller records than the store's block size, for bytes a player waits for: they become
   * readable every `recordBytes` instead of every block.
   */
  recordBytes: number | undefined;

  constructor(
    private readonly store: DownloadStore,
    private readonly jobId: string,
    private readonly gate = new WriteGate(store.writeConcurrency),
    private readonly onStored: (start: number, end: number) => void = () => {},
  ) {}

  /** Absolute offset of the next byte pushed. */
  get position(): number {
    return this.blockStart + this.filled;
  }

  /** Starts writing at `offset` (up to `end`, if known); buffered bytes must be flushed. */
  seek(offset: number, end?: number): void {
    if (this.filled > 0) throw new Error('BlockWriter.seek with unflushed bytes');
    this.blockStart = offset;
    this.end = end;
  }

  async push(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      this.throwIfFailed();
      const recordBytes = this.recordBytes ?? this.store.blockSize;
      // Align records to multiples of the record size so a re-fetch replaces whole records.
      let boundary = (Math.floor(this.blockStart / recordBytes) + 1) * recordBytes;
      if (this.end !== undefined) boundary = Math.min(boundary, Math.max(this.end, this.position + 1));
      if (this.position >= boundary) {
        // The record size shrank below what is buffered: store that much now.
        await this.writeBuffered();
        continue;
      }
      // Whole blocks from the gate's recycled buffers; a larger record (tiny blocks) gets its own.
      this.buffer ??= this.gate.takeBuffer(Math.max(this.store.blockSize, boundary - this.blockStart));
      const take = Math.min(boundary - this.position, chunk.length - offset);
      this.buffer.set(chunk.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.position === boundary) await this.writeBuffered();
    }
  }

  /** Writes the partial block and waits for every write in flight. */
  async flush(): Promise<void> {
    if (this.filled > 0) await this.writeBuffered();
    await Promise.allSettled([...this.pending]);
    this.throwIfFailed();
  }

  private async writeBuffered(): Promise<void> {
    const start = this.blockStart;
    const buffer = this.buffer!;
    const data = buffer.subarray(0, this.filled);
    // Read before the write: a store may take the buffer (detaching it).
    const end = start + data.length;
    this.buffer = undefined;
    this.blockStart += this.filled;
    this.filled = 0;
    await this.gate.acquire();
    let reusable = buffer;
    const write = this.store.writeBlock(this.jobId, start, data).then(
      (returned) => {
        // A store that moved the buffer away may hand it back.
        if (returned) reusable = new Uint8Array(returned.buffer);
        this.stored += end - start;
        this.onStored(start, end);
      },
      (error: unknown) => {
        this.failure ??= { error };
      },
    );
    this.pending.add(write);
    void write.finally(() => {
      this.pending.delete(write);
      this.gate.recycle(reusable);
      this.gate.release();
    });
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}
