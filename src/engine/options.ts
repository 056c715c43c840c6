import { createHasher, type HasherFactory } from './integrity/hasher';
import type { RateLimiter } from './rate-limiter';

/** Tunables of one download; every field has a default suited to real networks. */
export interface EngineOptions {
  /** A connection that delivers no byte for this long is abandoned and resumed. */
  stallTimeoutMs: number;
  /** Failed attempts in a row that received nothing before the job fails. */
  maxAttemptsWithoutProgress: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** A Retry-After longer than this fails the job instead of waiting. */
  maxRetryAfterMs: number;
  /** Without working ranges, a broken transfer restarts from zero only up to this size. */
  maxRestartBytes: number;
  /** How many times the file may change on the server before the job gives up. */
  maxRestarts: number;
  /** Minimum time between progress events. */
  progressIntervalMs: number;
  /** Requests in flight to one mirror at once: the second overlaps the first's end (≤ 6). */
  connectionsPerServer: number;
  /** At most this many mirrors are used at once, chosen by HRW order, load and distance. */
  maxMirrors: number;
  /** A block should last about this long at its mirror's rate (and at least 4 round trips). */
  blockSeconds: number;
  minBlockBytes: number;
  maxBlockBytes: number;
  /** Bound on bytes buffered by requests in flight (sets the block window's maximum). */
  maxBufferBytes: number;
  /** Extra request headers (e.g. Referer is set through `referrer`). */
  headers: Record<string, string>;
  referrer?: string;
  credentials: RequestCredentials;
  fetch: typeof fetch;
  /** A speed limit to share with other downloads, if any. */
  rateLimiter?: RateLimiter;
  /** Streaming hash factory; Node passes its native one, the extension a WebAssembly one. */
  createHasher: HasherFactory;
}

export const DEFAULT_OPTIONS: EngineOptions = {
  stallTimeoutMs: 20_000,
  maxAttemptsWithoutProgress: 8,
  retryBaseMs: 500,
  retryMaxMs: 30_000,
  maxRetryAfterMs: 5 * 60_000,
  maxRestartBytes: 64 * 1024 * 1024,
  maxRestarts: 3,
  progressIntervalMs: 250,
  connectionsPerServer: 2,
  maxMirrors: 8,
  blockSeconds: 1,
  minBlockBytes: 128 * 1024,
  maxBlockBytes: 16 * 1024 * 1024,
  maxBufferBytes: 96 * 1024 * 1024,
  headers: {},
  credentials: 'same-origin',
  // Late-bound so tests and the extension can patch the global.
  fetch: (input, init) => fetch(input, init),
  createHasher,
};

export function withDefaults(options: Partial<EngineOptions> = {}): EngineOptions {
  return { ...DEFAULT_OPTIONS, ...options };
}
