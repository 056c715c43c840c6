/**
 * What TCP lets one connection send per round trip, emulated on loopback (which has neither slow start
 * nor a real round trip): time is cut into rounds of `rttMs`; a round carries at most `window` bytes.
 * With slow start the window starts at 10 segments of 1460 B and doubles after every round that filled
 * it (a round held back by a rate cap does not grow it, as Linux does not grow an unused window), up to
 * `maxWindow`; a connection that sent nothing for longer than its retransmission timeout starts again from 10
 * segments (RFC 5681 §4.1, Linux's tcp_slow_start_after_idle). Without slow start the window is `maxWindow` from the start:
 * a far server whose connections are limited by their receive window.
 */
export const SEGMENT_BYTES = 1460;
export const INITIAL_WINDOW_BYTES = 10 * SEGMENT_BYTES;

/**
 * Linux's retransmission timeout on a steady path: srtt + max(4·rttvar, 200 ms), with rttvar ≈ 0 on a
 * steady emulated round trip: the round trip plus 200 ms. An idle connection restarts slow start past it.
 */
export const retransmissionTimeoutMs = (rttMs: number): number => rttMs + 200;

export interface CongestionWindowOptions {
  rttMs: number;
  slowStart: boolean;
  /** Bytes per round trip at most; Infinity: only slow start (and the rate caps) limit it. */
  maxWindow: number;
  /** Silence that restarts slow start; by default the retransmission timeout of `rttMs`. */
  idleRestartMs?: number;
}

export class CongestionWindow {
  private window: number;
  private roundStart: number | undefined;
  private roundSent = 0;
  private lastSentAt: number | undefined;
  private readonly idleRestartMs: number;

  constructor(private readonly options: CongestionWindowOptions) {
    if (!(options.rttMs > 0)) throw new RangeError(`a congestion window needs a round trip > 0 ms, not ${options.rttMs}`);
    if (!(options.maxWindow > 0)) throw new RangeError(`bad window ${options.maxWindow}`);
    this.window = this.initial();
    this.idleRestartMs = options.idleRestartMs ?? retransmissionTimeoutMs(options.rttMs);
  }

  /** The window of the current round, in bytes. */
  get bytes(): number {
    return this.window;
  }

  /** A response's body starts: after a long enough silence the window is back to its initial size. */
  restartIfIdle(now: number): void {
    if (this.lastSentAt !== undefined && now - this.lastSentAt > this.idleRestartMs) {
      this.window = this.initial();
      this.roundStart = undefined;
      this.roundSent = 0;
    }
  }

  /** Bytes that may be sent at `now`; when none, `waitMs` is how long until the next round opens. */
  room(now: number): { bytes: number; waitMs: number } {
    this.advance(now);
    const bytes = this.window - this.roundSent;
    return bytes > 0 ? { bytes, waitMs: 0 } : { bytes: 0, waitMs: Math.max(1, this.roundStart! + this.options.rttMs - now) };
  }

  /** `bytes` (at most the room) were sent at `now`. */
  sent(bytes: number, now: number): void {
    this.advance(now);
    this.roundStart ??= now;
    this.roundSent += bytes;
    this.lastSentAt = now;
  }

  private initial(): number {
    return this.options.slowStart ? Math.min(INITIAL_WINDOW_BYTES, this.options.maxWindow) : this.options.maxWindow;
  }

  private advance(now: number): void {
    const { rttMs, slowStart, maxWindow } = this.options;
    if (this.roundStart === undefined || now < this.roundStart + rttMs) return;
    if (slowStart && this.roundSent >= this.window) this.window = Math.min(this.window * 2, maxWindow);
    // Back to back rounds keep their rhythm; after a pause within a response the next round starts now.
    this.roundStart = now < this.roundStart + 2 * rttMs ? this.roundStart + rttMs : now;
    this.roundSent = 0;
  }
}
