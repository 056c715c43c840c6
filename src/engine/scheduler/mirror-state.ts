import { RateMeter } from '../rate-meter';

/**
 * probing: its first bytes are being fetched; tentative: working before the primary answered,
 * its first bytes not yet compared (its stored bytes are discarded if they differ); active;
 * dropped.
 */
export type MirrorPhase = 'probing' | 'tentative' | 'active' | 'dropped';

/** What the UI shows of one mirror. */
export interface MirrorReport {
  url: string;
  phase: MirrorPhase;
  /** Body bytes received from it. */
  bytes: number;
  requests: number;
  /** Recent throughput, bytes/s. */
  rate: number;
  rttMs?: number;
  /** Why it was dropped, in plain words. */
  dropped?: string;
  /** Attempts in a row that received nothing (0 while it delivers). */
  failures?: number;
  /** While it waits before trying again: when (ms since the epoch). */
  retryAt?: number;
  /** Its last failure in plain words ("503 Service Unavailable"), when the scheduler said. */
  lastFailure?: string;
}

/** One source of the file: its health, estimates and load. */
export class MirrorState {
  phase: MirrorPhase;
  dropReason: string | undefined;
  /** This mirror's own validators (mirrors' ETags differ from the primary's legitimately). */
  etag: string | undefined;
  lastModified: string | undefined;
  rttMs: number | undefined;
  inFlight = 0;
  bytes = 0;
  requests = 0;
  failuresInARow = 0;
  deadlineMisses = 0;
  backoffUntil = 0;
  /** The last failure in plain words, for the UI while it is retried. */
  lastFailure: string | undefined;
  /** When the last body byte arrived from it (0: never). */
  lastByteAt = 0;
  /** Its probe, kept until the primary's first bytes arrive to compare with. */
  probe: { bytes: Uint8Array; size: number | undefined } | undefined;
  /** Dropped while tentative: whatever it stores is discarded. */
  untrusted = false;
  private readonly meter: RateMeter;

  constructor(
    readonly id: number,
    readonly url: string,
    readonly isPrimary: boolean,
    now: () => number = Date.now,
  ) {
    this.phase = isPrimary ? 'active' : 'probing';
    this.meter = new RateMeter(3000, now);
  }

  received(bytes: number, now = Date.now()): void {
    this.bytes += bytes;
    this.lastByteAt = now;
    this.meter.add(bytes);
  }

  /** Sending data moments ago: a failure now is a reset or a switch, not an outage. */
  recentlyAlive(now: number): boolean {
    return now - this.lastByteAt < 2000;
  }

  /** Recent throughput over all of this mirror's connections, bytes/s (0 until measured). */
  rate(): number {
    return this.meter.rate();
  }

  observeRtt(ms: number): void {
    this.rttMs = this.rttMs === undefined ? ms : 0.75 * this.rttMs + 0.25 * ms;
  }

  usable(now: number): boolean {
    return (this.phase === 'active' || this.phase === 'tentative') && now >= this.backoffUntil;
  }

  /**
   * Failed before any byte: back off exponentially, or as the server asked. The first failure
   * of a mirror that was delivering data a moment ago is retried at once (paper 1: a broken
   * connection mid-transfer is a server switch, not an outage).
   */
  failed(baseMs: number, maxMs: number, retryAfterMs?: number, now = Date.now()): void {
    this.failuresInARow++;
    if (retryAfterMs === undefined && this.failuresInARow === 1 && this.recentlyAlive(now)) return;
    const delay = retryAfterMs ?? Math.min(maxMs, baseMs * 2 ** (this.failuresInARow - 1));
    this.backoffUntil = now + delay;
  }

  drop(reason: string): void {
    if (this.phase === 'tentative') this.untrusted = true;
    this.phase = 'dropped';
    this.dropReason = reason;
  }

  report(): MirrorReport {
    return {
      url: this.url,
      phase: this.phase,
      bytes: this.bytes,
      requests: this.requests,
      rate: this.rate(),
      rttMs: this.rttMs,
      dropped: this.dropReason,
      failures: this.failuresInARow,
      retryAt: this.backoffUntil > Date.now() ? this.backoffUntil : undefined,
      lastFailure: this.failuresInARow > 0 ? this.lastFailure : undefined,
    };
  }
}
