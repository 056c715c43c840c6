import { realClock, type Clock } from './clock';
import type { HttpFetch } from './http/fetch-port';
import { createHasher, type HasherFactory } from './integrity/hasher';
import { trustedFetch } from './http/request-trust';
import { DEFAULT_MAX_BLOCK_BYTES, DEFAULT_STALL_SECONDS } from './limits';
import type { RateLimiter } from './rate-limiter';
import { DEFAULT_CONNECTION_COUNT } from './scheduler/connections/connection-count';
import { streamFetch } from './streams/stream-fetch';
import type { StreamLayout } from './streams/stream-layout';

export type { Clock } from './clock';

/** Tunables of one download; every field has a default suited to real networks. */
export interface EngineTunables {
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
  /**
   * Connections (HTTP/2: requests in flight) each server starts with; the connection-count
   * policy adds more while they raise its rate, up to `maxConnectionsPerServer`.
   */
  connectionsPerServer: number;
  /**
   * The most connections to one server (with HTTP/2: requests in flight on its connection) that the
   * connection-count policy (scheduler/connections/connection-count.ts) may open; it opens only as many as pay.
   */
  maxConnectionsPerServer: number;
  /** Per-site overrides of that maximum, by host name or parent domain (see maxConnectionsFor). */
  maxConnectionsPerSite: Record<string, number>;
  /** The user's country (ISO 3166-1 alpha-2, lower case), if known: mirrors there come first within a priority. */
  userLocation?: string;
  /** At most this many mirrors are used at once, chosen by HRW order, load and distance. */
  maxMirrors: number;
  /** A block should last about this long at its mirror's rate (and at least 4 round trips). */
  blockSeconds: number;
  minBlockBytes: number;
  maxBlockBytes: number;
  /** Bound on bytes buffered by requests in flight (sets the block window's maximum). */
  maxBufferBytes: number;
}

/** What every request of the download carries. */
export interface RequestContext {
  /** Extra request headers (e.g. Referer is set through `referrer`). */
  headers: Record<string, string>;
  /** The page the download came from: sent to the origin of the job's URL only. */
  referrer?: string;
  /** Credentials for the origin of the job's URL and `credentialOrigins`; every other URL gets none. */
  credentials: RequestCredentials;
  /** Origins (e.g. mirrors in a user's rule) that may receive credentials too. */
  credentialOrigins: string[];
  /**
   * The URL the user chose when the job's own URL was named by someone else (a remote Metalink
   * file's first URL): every request is judged against it, so that file cannot make the job's own
   * host count as the user's choice and reach the user's network.
   */
  trustUrl?: string;
}

/** The ports the engine is given by its platform (the extension, the CLI, tests). */
export interface EngineDependencies {
  /** A job sends every request through `trustedFetch` around this (see jobOptions). */
  fetch: HttpFetch;
  /** Streaming hash factory; Node passes its native one, the extension a WebAssembly one. */
  createHasher: HasherFactory;
  /** A speed limit to share with other downloads, if any. */
  rateLimiter?: RateLimiter;
  /** The time and every timer of the job (clock.ts). */
  clock: Clock;
}

export type EngineOptions = EngineTunables & RequestContext & EngineDependencies;

/**
 * At most this many URLs of one file (the primary included) are kept, however many a user, a
 * server or a Metalink file names: a hostile list of thousands would cost a request each and
 * bloat every saved state. `maxMirrors` of them are in use at once.
 */
export const MAX_SOURCES = 32;

/**
 * The CLI runs with these (the benchmark measures them). The extension's settings
 * (src/settings/schema.ts) differ on purpose in two: at most 4 connections per server (browsers
 * open six per host over HTTP/1.1, and pages need some) and 1 MiB smallest blocks, so fewer,
 * larger block records go to IndexedDB.
 */
export const DEFAULT_OPTIONS: EngineOptions = {
  stallTimeoutMs: DEFAULT_STALL_SECONDS * 1000,
  maxAttemptsWithoutProgress: 8,
  retryBaseMs: 500,
  retryMaxMs: 30_000,
  maxRetryAfterMs: 5 * 60_000,
  maxRestartBytes: 64 * 1024 * 1024,
  maxRestarts: 3,
  progressIntervalMs: 250,
  connectionsPerServer: 2,
  maxConnectionsPerServer: DEFAULT_CONNECTION_COUNT.max,
  maxConnectionsPerSite: {},
  maxMirrors: 8,
  blockSeconds: 1,
  minBlockBytes: 128 * 1024,
  maxBlockBytes: DEFAULT_MAX_BLOCK_BYTES,
  maxBufferBytes: 96 * 1024 * 1024,
  headers: {},
  credentials: 'same-origin',
  credentialOrigins: [],
  // Late-bound so tests and the extension can patch the global. Every job wraps it in its door (jobOptions).
  // eslint-disable-next-line no-restricted-globals -- the engine's default port
  fetch: (input, init) => fetch(input, init),
  createHasher,
  clock: realClock,
};

export function withDefaults(options: Partial<EngineOptions> = {}): EngineOptions {
  return { ...DEFAULT_OPTIONS, ...options };
}

/**
 * A job's options: each request and redirect it makes gets the policy of its own URL
 * (request-trust.ts). A stream's job asks its sources' ranges of the segments (stream-fetch.ts),
 * each segment's request under that same policy.
 */
export function jobOptions(options: Partial<EngineOptions> | undefined, primaryUrl: string, stream?: StreamLayout): EngineOptions {
  const all = withDefaults(options);
  const scope = {
    primaryUrl: all.trustUrl ?? primaryUrl,
    credentials: all.credentials,
    credentialOrigins: all.credentialOrigins,
    referrer: all.referrer,
    // A file's mirror set admits plain http only under digests (mirror-set.ts); a stream has none.
    allowPlainHttp: stream === undefined,
  };
  const trusted = trustedFetch(all.fetch, scope);
  return { ...all, fetch: stream ? streamFetch(stream, trusted, all.clock) : trusted };
}
