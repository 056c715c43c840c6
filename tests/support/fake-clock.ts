import type { Clock } from '../../src/engine/clock';

interface Timer {
  at: number;
  order: number;
  callback: () => void;
}

/**
 * The engine's clock in virtual time: it moves only when `advance` says, and runs the timers that fall
 * due on the way, each at its own time, in the order they were set when due together.
 */
export class FakeClock implements Clock {
  private timers: Timer[] = [];
  private set = 0;

  constructor(private time = 0) {}

  now(): number {
    return this.time;
  }

  after(ms: number, callback: () => void): () => void {
    const timer = { at: this.time + Math.max(0, ms), order: this.set++, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Timers set and not yet run or cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves the time `ms` on; a timer a callback sets that falls due within runs too. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = due.at;
      due.callback();
    }
    this.time = end;
  }
}
