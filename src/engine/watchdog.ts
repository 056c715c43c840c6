/** Aborts a controller when `kick` has not been called for `timeoutMs`: a silent connection. */
export class Watchdog {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastKick = 0;

  constructor(
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
    this.lastKick = Date.now();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      const silent = Date.now() - this.lastKick;
      if (silent >= this.timeoutMs) this.controller.abort(this.reason());
      else this.arm(this.timeoutMs - silent);
    }, ms);
  }
}
