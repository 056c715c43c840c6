import type { Clock } from '../../clock';
import type { FailureFacts } from '../../errors';
import type { DropReason } from '../../notice';
import { RateMeter } from '../../rate-meter';
import { backoffDelay } from '../../retry';
import type { SourceHint } from '../../sources/hrw';
import { ConnectionCount, type ConnectionCountOptions, type ConnectionsWhy } from '../connections/connection-count';
import { RefusalOrReset } from '../connections/refusal-or-reset';

/** Weight of the newest request in the moving average of the wait share. */
const WAIT_SHARE_WEIGHT = 0.25;

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
  /** Why it was dropped. */
  dropped?: DropReason;
  /** Requests in flight to it now (HTTP/1.1: connections). */
  connections: number;
  /** Why that many (the connection-count policy's reason). */
  connectionsWhy: ConnectionsWhy;
  /** Attempts in a row that received nothing (0 while it delivers). */
  failures?: number;
  /** While it waits before trying again: when (ms since the epoch). */
  retryAt?: number;
  /** Its last failure (a 503, a refused connection), when the scheduler said. */
  lastFailure?: FailureFacts;
  /** Attempts in a row that receive nothing before it is given up (the engine's option). */
  maxFailures: number;
}

/** One source of the file: its health, estimates and load. */
export class MirrorState {
  phase: MirrorPhase;
  dropReason: DropReason | undefined;
  /** This mirror's own validators (mirrors' ETags differ from the primary's legitimately). */
  etag: string | undefined;
  lastModified: string | undefined;
  rttMs: number | undefined;
  /** The shortest time to headers seen: the round trip without the moments a busy client or server added. */
  minRttMs: number | undefined;
  /** The share of its recent requests' time spent waiting for the headers (a moving average). */
  waitShare = 0;
  inFlight = 0;
  bytes = 0;
  requests = 0;
  failuresInARow = 0;
  deadlineMisses = 0;
  backoffUntil = 0;
  /** The last failure, for the UI while it is retried. */
  lastFailure: FailureFacts | undefined;
  /** When the last body byte arrived from it (0: never). */
  lastByteAt = 0;
  /** Its probe, kept until the primary's first bytes arrive to compare with. */
  probe: { bytes: Uint8Array; size: number | undefined } | undefined;
  /** Dropped while tentative: whatever it stores is discarded. */
  untrusted = false;
  /** What the sources said about its order (priority, country). */
  hint: SourceHint | undefined;
  /** How many connections this server gets, by measurement. */
  readonly connectionCount: ConnectionCount;
  private readonly meter: RateMeter;
  /** When its first request went out (its round trip is at least the time since, until it answers). */
  private firstAskedAt: number | undefined;
  /** Bytes and time at the last observation fed to the connection count. */
  private observed = { bytes: 0, downloadBytes: 0, at: 0 };
  /** Whether a connection closed before answering was a refusal (for the connection count) or a reset. */
  private readonly refusalOrReset = new RefusalOrReset();

  constructor(
    readonly id: number,
    readonly url: string,
    readonly isPrimary: boolean,
    connectionCount: Partial<ConnectionCountOptions>,
    private readonly clock: Clock,
  ) {
    this.phase = isPrimary ? 'active' : 'probing';
    this.meter = new RateMeter(clock, 3000);
    this.connectionCount = new ConnectionCount(connectionCount);
  }

  /** Connections it may have now (0 while backing off from a refusal). */
  connections(now: number): number {
    return this.connectionCount.limit(now);
  }

  /** A request of it broke: before its headers or mid-body (`lastBody`: the only body on its way from it). */
  broke(now: number, lastBody = false): void {
    if (this.refusalOrReset.broke(now, lastBody)) this.connectionCount.reset(now);
  }

  /** A new connection was closed before any header while `working` others to it were open. */
  closedBeforeAnswering(now: number, working: number): void {
    this.refusalOrReset.closedBeforeAnswering(now, working);
  }

  /**
   * Feeds the connection count with the rate since the last call, its own and the whole download's (`downloadBytes`:
   * received from every mirror so far), what the download still needs (`size`: the file's, if known), and refusals
   * once known (called every tick).
   */
  observeConnections(now: number, downloadBytes: number, size?: number): void {
    const working = this.refusalOrReset.refusal(now);
    if (working !== undefined) this.connectionCount.refused(now, { connections: working });
    const before = this.observed;
    this.observed = { bytes: this.bytes, downloadBytes, at: now };
    if (before.at === 0 || now <= before.at) return;
    const perSecond = (bytes: number) => (bytes * 1000) / (now - before.at);
    this.connectionCount.observe(now, {
      totalRate: perSecond(this.bytes - before.bytes),
      downloadRate: perSecond(downloadBytes - before.downloadBytes),
      connections: this.inFlight,
      rttMs: this.minRttMs,
      unansweredMs: this.minRttMs === undefined && this.firstAskedAt !== undefined ? now - this.firstAskedAt : undefined,
      remainingBytes: size === undefined ? undefined : Math.max(0, size - downloadBytes),
    });
  }

  /** A request to it went out. */
  asked(now: number): void {
    this.firstAskedAt ??= now;
  }

  received(bytes: number, now: number): void {
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
    this.minRttMs = Math.min(ms, this.minRttMs ?? ms);
  }

  /**
   * A request of it ended: `headersMs` of its `totalMs` went to waiting for the headers, counted up to its shortest
   * round trip (the moments a busy client added are not the server's).
   */
  observeWait(headersMs: number, totalMs: number): void {
    const waited = Math.min(headersMs, this.minRttMs ?? headersMs);
    if (totalMs > 0) this.waitShare += WAIT_SHARE_WEIGHT * (Math.min(1, waited / totalMs) - this.waitShare);
  }

  usable(now: number): boolean {
    return (this.phase === 'active' || this.phase === 'tentative') && now >= this.backoffUntil;
  }

  /**
   * Failed before any byte: back off exponentially with jitter (the same backoff as one
   * stream), or as the server asked. The first failure of a mirror that was delivering data a
   * moment ago is retried at once (paper 1: a broken connection mid-transfer is a server
   * switch, not an outage).
   */
  failed(now: number, baseMs: number, maxMs: number, retryAfterMs?: number): void {
    this.failuresInARow++;
    if (retryAfterMs === undefined && this.failuresInARow === 1 && this.recentlyAlive(now)) return;
    const delay = retryAfterMs ?? backoffDelay(this.failuresInARow - 1, baseMs, maxMs);
    this.backoffUntil = now + delay;
  }

  drop(reason: DropReason): void {
    if (this.phase === 'tentative') this.untrusted = true;
    this.phase = 'dropped';
    this.dropReason = reason;
  }

  report(): Omit<MirrorReport, 'maxFailures'> {
    return {
      url: this.url,
      phase: this.phase,
      bytes: this.bytes,
      requests: this.requests,
      rate: this.rate(),
      rttMs: this.rttMs,
      dropped: this.dropReason,
      connections: this.inFlight,
      connectionsWhy: this.connectionCount.reason,
      failures: this.failuresInARow,
      retryAt: this.backoffUntil > this.clock.now() ? this.backoffUntil : undefined,
      lastFailure: this.failuresInARow > 0 ? this.lastFailure : undefined,
    };
  }
}
