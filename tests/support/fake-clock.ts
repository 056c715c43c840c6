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

  /** Calls `action` every `ms` milliseconds (it may stop itself); the function returned stops it. */
  every(ms: number, action: () => void): () => void {
    let cancel: () => void;
    const tick = () => {
      cancel = this.after(ms, tick);
      action();
    };
    cancel = this.after(ms, tick);
    return () => cancel();
  }

  /** Resolves `ms` from now, in virtual time. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /**
   * Runs `work` in virtual time, as an event loop would: lets every promise and stream step that is
   * ready run (one turn of Node's loop), then moves the time to the next timer and runs it, until
   * `work` settles. Throws when nothing is left to wait for while `work` is not done (a deadlock), or
   * when it is not done `limitMs` from now. Whatever `work` waits on must settle in microtasks or on
   * this clock: real I/O would be overtaken by the virtual time.
   */
  async run<T>(work: Promise<T>, limitMs = Infinity): Promise<T> {
    let settled = false;
    work.then(
      () => (settled = true),
      () => (settled = true),
    );
    const end = this.time + limitMs;
    for (;;) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (settled) return work;
      let next: Timer | undefined;
      for (const timer of this.timers) if (!next || timer.at < next.at || (timer.at === next.at && timer.order < next.order)) next = timer;
      if (!next) throw new Error(`virtual time ${this.time} ms: nothing is left to wait for, and the work is not done`);
      if (next.at > end) throw new Error(`virtual time: not done after ${limitMs} ms`);
      this.timers.splice(this.timers.indexOf(next), 1);
      this.time = Math.max(this.time, next.at);
      next.callback();
    }
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
