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
 * `perConnection` bytes/s (log2 of the initial windows it needs, not rounded up: its last doubling already sends
 * more than that) and one more (past that, slow start is not what holds it back), at most `warmupRtts`, at
 * least `warmupMs`.
 */
export function warmupMs(perConnection: number, rttMs: number, options: WarmupOptions): number {
  const windows = (perConnection * rttMs) / 1000 / INITIAL_WINDOW_BYTES;
  const rtts = Math.min(options.warmupRtts, 1 + Math.max(1, Math.log2(windows)));
  return Math.max(options.warmupMs, rtts * rttMs);
}

/**
 * After a reset, how many connections carry `rate` (the server's before it) from their first round trip, in
 * which each sends INITIAL_WINDOW_BYTES: at least twice `count`, where each reaches the rate a round trip sooner.
 * The caller bounds it by the maximum and a known limit.
 */
export function rewarmCount(count: number, rate: number, rttMs: number): number {
  return Math.max(2 * count, Math.ceil((rate * rttMs) / 1000 / INITIAL_WINDOW_BYTES));
}

/**
 * A far server starts with this many times `initial`: each step there waits out a slow start of many long
 * round trips, while the slow starts of connections opened together run side by side (on a 300 ms path, 8
 * connections carry 4 MB/s about a round trip sooner than 4), and a server that caps the total loses nothing
 * to a few more.
 */
const FAR_START_FACTOR = 4;

/** A server at least `farRttMs` away starts with FAR_START_FACTOR × `initial` (at most `max`). */
export function farStartCount(rttMs: number, initial: number, max: number, farRttMs: number): number | undefined {
  return rttMs >= farRttMs ? Math.min(max, FAR_START_FACTOR * initial) : undefined;
}

/**
 * Whether the download, `remainingBytes` (if known) at `downloadRate`, ends before connections added now have been
 * warm as long as they were cold: in slow start they carry a fraction of the rate, and their blocks end late.
 */
export function endsBeforeWarm(
  remainingBytes: number | undefined,
  downloadRate: number,
  perConnection: number,
  rttMs: number,
  options: WarmupOptions,
): boolean {
  if (remainingBytes === undefined || !(downloadRate > 0)) return false;
  return (remainingBytes / downloadRate) * 1000 < 2 * warmupMs(perConnection, rttMs, options);
}
