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

/** One mirror's part in the requests in flight: as many as its connection count asks for, and those it has on the wire. */
export interface MirrorLoad {
  wanted: number;
  onWire: number;
}

/**
 * How many more block requests may start: as many as the block window allows or, when more, as the mirrors'
 * connection counts ask for (each count is measured: more connections there paid), within what memory allows.
 * A mirror's requests past its count (it just gave connections back, or waits out a refusal) end without a
 * successor and take no other mirror's room: else that mirror's free connection would wait for them, long
 * enough on a far path for TCP to fall back into slow start.
 */
export function requestRoom(window: number, memory: number, loads: readonly MirrorLoad[]): number {
  let onWire = 0;
  let wanted = 0;
  let withinCounts = 0;
  for (const load of loads) {
    onWire += load.onWire;
    wanted += load.wanted;
    withinCounts += Math.min(load.onWire, load.wanted);
  }
  return Math.max(0, Math.min(memory - onWire, Math.max(Math.floor(window) - onWire, wanted - withinCounts)));
}
