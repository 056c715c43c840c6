/**
 * The block window (CoBlitz): how many requests may be in flight. It grows by 1/log(w) for
 * each block finished faster than average and shrinks by one for each block whose first
 * request missed its deadline, between 1 and a memory bound.
 */
export class BlockWindow {
  constructor(
    private size: number,
    private readonly max: number,
  ) {
    this.size = Math.min(Math.max(1, size), max);
  }

  /** Starts at one request per connection of every mirror in use (plus one), bounded by memory. */
  static forDownload(mirrors: number, maxMirrors: number, connections: number, maxBufferBytes: number, recordBytes: number): BlockWindow {
    const max = Math.max(2, Math.min(mirrors * (connections + 1), Math.floor(maxBufferBytes / recordBytes)));
    return new BlockWindow(Math.min(mirrors, maxMirrors) * connections + 1, max);
  }

  get value(): number {
    return this.size;
  }

  allows(inFlight: number): boolean {
    return inFlight < Math.floor(this.size);
  }

  fastBlock(): void {
    const log = Math.log(this.size);
    this.size = Math.min(this.max, this.size + 1 / (log > 0 ? log : 1));
  }

  deadlineMissed(): void {
    this.size = Math.max(1, this.size - 1);
  }
}
