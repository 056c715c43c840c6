/**
 * What TCP slow start means for judging a server's connection count. Pure: the caller passes the round trip.
 * A new connection sends 10 segments in its first round trip (RFC 6928) and doubles each round trip.
 */

/** Bytes a connection in slow start may send in its first round trip (RFC 6928: 10 segments). */
export const INITIAL_WINDOW_BYTES = 10 * 1460;

export interface WarmupOptions {
  /** At least this long… */
  warmupMs: number;
  /** …and the round trips slow start needs, at most this many (6: a window 64 × the initial one). */
  warmupRtts: number;
}

/**
 * How long after a change rates are not judged: the round trips a new connection needs to reach
 * `perConnection` bytes/s and one more (past that, slow start is not what holds it back), at most
 * `warmupRtts`, at least `warmupMs`.
 */
export function warmupMs(perConnection: number, rttMs: number, options: WarmupOptions): number {
  const windows = (perConnection * rttMs) / 1000 / INITIAL_WINDOW_BYTES;
  const rtts = Math.min(options.warmupRtts, 1 + Math.max(1, Math.ceil(Math.log2(windows))));
  return Math.max(options.warmupMs, rtts * rttMs);
}

/**
 * A server at least `farRttMs` away starts with twice `initial` (at most `max`): each step there waits out a
 * slow start of many long round trips, and a server that caps the total loses nothing to a few more.
 */
export function farStartCount(rttMs: number, initial: number, max: number, farRttMs: number): number | undefined {
  return rttMs >= farRttMs ? Math.min(max, 2 * initial) : undefined;
}
