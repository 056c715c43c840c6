/** A request starting this far before where an earlier one of the element got to reads on from there. */
const CONTINUES_BEHIND = 1024 * 1024;
/** ... or this far after it (the element asks again from its own block boundary). */
const CONTINUES_AHEAD = 64 * 1024;
/** Stopped reads remembered per element, to tell a re-read of an old position from a seek. */
const REMEMBERED = 8;

/** One range request of a media element: where its response got to, and what it last said it needs. */
export interface ElementRead {
  /** Seeks rank above every earlier read; a read that goes on from an earlier one takes its rank. */
  readonly rank: number;
  /** The next byte its response delivers. */
  pos: number;
  /** The first byte it waits for (undefined: none), as the route last found it. */
  wants: number | undefined;
  open: boolean;
}

/**
 * The range requests one page's media element made on one job, and which of them says where it
 * plays. Chrome's element keeps, or asks again for, reads at its old position around a seek
 * (after reading the index at the end it reads on from where it was, then at the target); only
 * a seek moves the player. A request that reads on from where an earlier one got to (within
 * CONTINUES_BEHIND / CONTINUES_AHEAD) continues it and takes its rank; any other is a seek and
 * ranks above all. The open read of the highest rank leads, the newest of equals.
 */
export class ElementReads {
  private ranks = 0;
  /** Open reads and the last few stopped ones, oldest first. */
  private readonly reads: ElementRead[] = [];
  /** When the last open read stopped (undefined while one is open). */
  idleSince: number | undefined;

  /** A new range request from `start`. */
  open(start: number): ElementRead {
    const continued = this.reads.findLast((r) => start >= r.pos - CONTINUES_BEHIND && start <= r.pos + CONTINUES_AHEAD);
    const read: ElementRead = { rank: continued?.rank ?? ++this.ranks, pos: start, wants: undefined, open: true };
    this.reads.push(read);
    this.idleSince = undefined;
    return read;
  }

  /** True when `read` says where the element plays. */
  leads(read: ElementRead): boolean {
    return read.open && this.lead() === read;
  }

  /** `read` ended (complete, cancelled, failed); returns the read that leads from now on when that changed. */
  close(read: ElementRead, now: number): ElementRead | undefined {
    if (!read.open) return undefined;
    const led = this.leads(read);
    read.open = false;
    const stopped = this.reads.filter((r) => !r.open);
    for (const old of stopped.slice(0, Math.max(0, stopped.length - REMEMBERED))) this.reads.splice(this.reads.indexOf(old), 1);
    const lead = this.lead();
    if (!lead) this.idleSince = now;
    return led ? lead : undefined;
  }

  private lead(): ElementRead | undefined {
    let best: ElementRead | undefined;
    for (const r of this.reads) if (r.open && (!best || r.rank >= best.rank)) best = r;
    return best;
  }
}
