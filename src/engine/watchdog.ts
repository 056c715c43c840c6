/** Aborts a controller when `kick` has not been called for `timeoutMs`: a silent connection. */
export class Watchdog {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly controller: AbortController,
    private readonly timeoutMs: number,
    private readonly reason: () => unknown,
  ) {
    this.kick();
  }

  kick(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(this.reason()), this.timeoutMs);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
