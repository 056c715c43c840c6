import type { Clock } from './clock';

/** Aborts a controller when `kick` has not been called for `timeoutMs`: a silent connection. */
export class Watchdog {
  private cancel: (() => void) | undefined;
  private lastKick = 0;

  constructor(
    private readonly clock: Clock,
    private readonly controller: AbortController,
    private readonly timeoutMs: number,
    private readonly reason: () => unknown,
  ) {
    this.kick();
    this.arm(timeoutMs);
  }

  /**
   * Notes activity. It only stamps the time: a kick per chunk of a fast body used to replace a
   * timer each time, and the timer now checks the stamp when it fires.
   */
  kick(): void {
    this.lastKick = this.clock.now();
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  private arm(ms: number): void {
    this.cancel = this.clock.after(ms, () => {
      const silent = this.clock.now() - this.lastKick;
      if (silent >= this.timeoutMs) this.controller.abort(this.reason());
      else this.arm(this.timeoutMs - silent);
    });
  }
}
