/**
 * A counting semaphore bounding the store writes in flight across all of a job's streams. It also
 * recycles the buffers of settled writes: once warm, the streams allocate no new memory per block,
 * which keeps garbage collection off the data path and the memory flat.
 */
export class WriteGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly spare: Uint8Array[] = [];

  constructor(private readonly limit: number) {}

  async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  /** A buffer of exactly `size` bytes with arbitrary contents: a recycled one when there is one. */
  takeBuffer(size: number): Uint8Array {
    const spare = this.spare.pop();
    return spare?.length === size ? spare : new Uint8Array(size);
  }

  /**
   * Gives back a buffer no store holds any more (its write settled). Every one is kept: the spares
   * never outnumber the buffers the streams and writes held at once, which the job needed anyway,
   * while dropping some (as many as one per block with more streams than writes) made garbage to
   * allocate again, and memory that stayed taken until the next garbage collection.
   */
  recycle(buffer: Uint8Array): void {
    // A store that moved the buffer to its writer's thread left it detached: nothing to reuse.
    if (buffer.byteLength > 0) this.spare.push(buffer);
  }
}
