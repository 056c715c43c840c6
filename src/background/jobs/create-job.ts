import {
  countryOfLocale,
  DownloadJob,
  parseHttpUrl,
  RateLimiter,
  sameOrigin,
  type DownloadStore,
  type EngineOptions,
  type RequestContext,
  type StreamLayout,
} from '../../engine';
import { cookieOriginsFor } from '../../settings/mirror-rules';
import type { MirrorRule, Settings } from '../../settings/schema';
import { enginePort } from '../network/requester';
import { createWasmHasher } from './wasm-hasher';

/** Whether a job's requests to the origin of its URL carry the browser's cookies. */
export type JobCredentials = 'include' | 'omit';

/** What the background knows when it starts a download. */
export interface JobSource {
  url: string;
  /** Further URLs of the same file (from the mirror rules). */
  mirrors: readonly string[];
  referrer?: string;
  credentials: JobCredentials;
  /** Mirror origins a rule allowed cookies for. */
  cookieOrigins: readonly string[];
}

/** What a job's requests carry besides its URLs: kept in its meta. */
export type RequestSource = Omit<JobSource, 'url' | 'mirrors'>;

/** The mirror origins that get the user's cookies with a job for `url`: a matching rule's, if it says so and the job sends cookies at all. */
export function jobCookieOrigins(url: string, credentials: JobCredentials, rules: readonly MirrorRule[]): string[] {
  return credentials === 'include' ? cookieOriginsFor(url, rules) : [];
}

/**
 * What a job's requests carry once it takes a new address (New link…) in place of `oldUrl`. The
 * user chose it, so it is the job's URL with the job's cookie mode (a take-over without cookies
 * stays without); the mirror rules give cookies to the mirrors of a rule the new URL matches, not
 * the old one's; the page's Referer goes along only on the old URL's origin (the page linked
 * there, not to another site).
 */
export function sourceForNewLink(source: RequestSource, oldUrl: string, url: string, rules: readonly MirrorRule[]): RequestSource {
  return {
    credentials: source.credentials,
    cookieOrigins: jobCookieOrigins(url, source.credentials, rules),
    referrer: sameOrigin(oldUrl, url) ? source.referrer : undefined,
  };
}

/** The engine's request context of a job's source (the engine applies it per request: request-trust.ts). */
export function requestContext(source: RequestSource): Pick<RequestContext, 'credentials' | 'credentialOrigins' | 'referrer'> {
  return { credentials: source.credentials, credentialOrigins: [...source.cookieOrigins], referrer: safeReferrer(source.referrer) };
}

/**
 * The one place where engine jobs are made and reopened, so the engine's signature (e.g. a list
 * of mirror URLs) is adapted here only.
 */
export function createJob(
  store: DownloadStore,
  id: string,
  source: JobSource,
  settings: Settings,
  limiter: RateLimiter = speedLimit,
  stream?: StreamLayout,
): Promise<DownloadJob> {
  return DownloadJob.create(store, { id, url: source.url, mirrors: [...source.mirrors], stream }, engineOptions(source, settings, limiter));
}

/** Reopens a stored job; its URLs (mirrors included) are in the engine's stored state. */
export function openJob(
  store: DownloadStore,
  id: string,
  source: RequestSource,
  settings: Settings,
  limiter: RateLimiter = speedLimit,
): Promise<DownloadJob | undefined> {
  return DownloadJob.open(store, id, engineOptions(source, settings, limiter));
}

/** The speed limit of the settings, shared by every download (all jobs, all connections). */
export const speedLimit = new RateLimiter();

/** One download's own limit (bytes/s; none when undefined), under the settings' limit for all. */
export function jobSpeedLimit(bytesPerSecond: number | undefined): RateLimiter {
  return new RateLimiter(bytesPerSecond ?? null, speedLimit);
}

/**
 * Requests to the URL's origin carry the site's cookies when the job says so (a taken-over
 * download must carry no more than the browser's own request); other origins get none unless a
 * mirror rule allowed them (the engine decides per request: request-trust.ts). The page's
 * `referrer` is passed on by Firefox's background page but dropped by Chrome's worker (it is not
 * same-origin with it): the Referer is set in both by a session rule while the job runs
 * (referrer-rules.ts, held by JobManager).
 */
function engineOptions(source: RequestSource, settings: Settings, limiter: RateLimiter): Partial<EngineOptions> {
  return {
    ...requestContext(source),
    // The setting is the most connections per server: browsers open at most six per host over
    // HTTP/1.1. The engine starts with two and adds more only while they pay.
    maxConnectionsPerServer: settings.connectionsPerServer,
    maxConnectionsPerSite: settings.connectionsPerSite,
    connectionsPerServer: Math.min(2, settings.connectionsPerServer),
    minBlockBytes: settings.minBlockBytes,
    stallTimeoutMs: settings.stallSeconds * 1000,
    maxBlockBytes: settings.maxBlockBytes,
    rateLimiter: limiter,
    userLocation: countryOfLocale(globalThis.navigator?.language),
    createHasher: createWasmHasher,
    // The hops fetch hides, put back for the engine to check (redirect-log.ts); all jobs together
    // leave one of the browser's connections to a host free for take-overs' probes.
    fetch: enginePort,
  };
}

function safeReferrer(referrer: string | undefined): string | undefined {
  return referrer ? parseHttpUrl(referrer)?.href : undefined;
}
