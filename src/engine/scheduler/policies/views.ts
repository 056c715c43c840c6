import type { SourceHint } from '../../sources/hrw';
import type { MirrorPhase } from '../loop/mirror-state';

/**
 * What the policies see of one mirror. `MirrorState` is one; unit tests hand-build others.
 * Policies read these views and return decisions; only the scheduler's loop changes state.
 */
export interface MirrorView {
  readonly url: string;
  readonly isPrimary: boolean;
  readonly phase: MirrorPhase;
  /** Requests in flight to it now. */
  readonly inFlight: number;
  readonly rttMs: number | undefined;
  readonly backoffUntil: number;
  /** What the sources said about its order (Link pri/geo, Metalink priority/location). */
  readonly hint?: SourceHint;
  /** Recent throughput over all of its connections, bytes/s (0 until measured). */
  rate(): number;
  /** The share of its recent requests' time spent waiting for the headers (0 until one finished). */
  readonly waitShare?: number;
  usable(now: number): boolean;
}

/** The copies of one block in flight; the first to reach `end` wins and the others are cut. */
export interface GroupView {
  readonly end: number;
  /** Bytes a player waits for: fastest mirror first, hedged early. */
  readonly urgent?: boolean;
  readonly fetches: ReadonlySet<unknown>;
  /** Requests made for these bytes so far (for deadline backoff). */
  readonly attempts: number;
  readonly missedDeadline: boolean;
}

/** What the policies see of one request in flight. */
export interface RequestView {
  readonly kind: 'block' | 'probe';
  readonly mirror: MirrorView;
  readonly start: number;
  /** Next byte expected. */
  readonly pos: number;
  readonly group: GroupView;
  readonly issuedAt: number;
  readonly lastByteAt: number;
  readonly expectedMs: number | undefined;
  readonly deadline: number;
}

/** A player's position: bytes [position, position + aheadBytes) are needed first. */
export interface Playback {
  position: number;
  aheadBytes: number;
  /** The media's mean bitrate in bytes/s, when known: urgent requests are sized by playback time. */
  bytesPerSecond?: number;
}

/** What a request's remaining bytes would cost on `mirror` if it took one more request now. */
export function freshRequestMs(mirror: MirrorView, bytes: number, fallbackRate = 1): number {
  const rate = mirror.rate() / (mirror.inFlight + 1);
  return (mirror.rttMs ?? 0) + (bytes * 1000) / Math.max(1, rate > 0 ? rate : fallbackRate);
}

/** When a request in flight will have delivered its remaining bytes, from now (ms). */
export function remainingMs(request: RequestView, now: number): number {
  const remaining = request.group.end - request.pos;
  if (remaining <= 0) return 0;
  const mirror = request.mirror;
  const rate = mirror.rate() / Math.max(1, mirror.inFlight);
  if (!(rate > 0)) return Infinity;
  // A request still waiting for its first byte has a round trip to go first.
  const waiting = request.pos === request.start ? Math.max(0, request.issuedAt + (mirror.rttMs ?? 0) - now) : 0;
  return waiting + (remaining * 1000) / rate;
}
