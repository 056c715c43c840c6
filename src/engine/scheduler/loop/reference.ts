/**
 * The first bytes of the file as the primary serves them. Every other mirror must serve the
 * same bytes there before it gets a block: a cheap probe that catches a mirror serving
 * another file (or another version) of the same size.
 */
export class Reference {
  /**
   * With the answer's headers, within a new connection's first window (slow-start.ts, INITIAL_WINDOW_BYTES): the
   * check takes one round trip, where 16 KiB took two and held back the mirror's first blocks as long.
   */
  static readonly PROBE_BYTES = 12 * 1024;
  private bytes: Uint8Array | undefined;
  private filled = 0;
  private waiters: Array<{ resolve: (bytes: Uint8Array) => void; reject: (error: unknown) => void }> = [];
  private abandoned: { error: unknown } | undefined;
  /** The file size the reference belongs to, once known. */
  size: number | undefined;

  /** How many bytes the probe compares (0 until the size is known). */
  get length(): number {
    return this.bytes?.length ?? 0;
  }

  setSize(size: number): void {
    this.size = size;
    this.bytes = new Uint8Array(Math.min(Reference.PROBE_BYTES, size));
    this.filled = 0;
    this.settleIfFull();
  }

  /** Takes the primary's bytes at `offset` while they continue the reference. */
  offer(offset: number, chunk: Uint8Array): void {
    const bytes = this.bytes;
    if (!bytes || offset > this.filled || this.filled >= bytes.length) return;
    const part = chunk.subarray(this.filled - offset, bytes.length - offset);
    bytes.set(part, this.filled);
    this.filled += part.length;
    this.settleIfFull();
  }

  async loadFrom(chunks: AsyncIterable<Uint8Array>): Promise<void> {
    let offset = 0;
    for await (const chunk of chunks) {
      this.offer(offset, chunk);
      offset += chunk.length;
    }
  }

  /** The reference bytes once complete. */
  bytesIfReady(): Uint8Array | undefined {
    return this.bytes && this.filled === this.bytes.length ? this.bytes : undefined;
  }

  /** Resolves with the reference bytes once complete; rejects when abandoned or aborted. */
  ready(signal: AbortSignal): Promise<Uint8Array> {
    if (this.abandoned) return Promise.reject(this.abandoned.error);
    if (this.bytes && this.filled === this.bytes.length) return Promise.resolve(this.bytes);
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      this.waiters.push(waiter);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }

  abandon(error: unknown): void {
    this.abandoned = { error };
    for (const w of this.waiters.splice(0)) w.reject(error);
  }

  private settleIfFull(): void {
    if (!this.bytes || this.filled < this.bytes.length) return;
    for (const w of this.waiters.splice(0)) w.resolve(this.bytes);
  }
}
