import { countryOfLocale, DownloadJob, parseHttpUrl, RateLimiter, type DownloadStore, type EngineOptions } from '../engine';
import type { Settings } from '../settings/schema';
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

/**
 * The one place where engine jobs are made and reopened, so the engine's signature (e.g. a list
 * of mirror URLs) is adapted here only.
 */
export function createJob(store: DownloadStore, id: string, source: JobSource, settings: Settings): Promise<DownloadJob> {
  return DownloadJob.create(store, { id, url: source.url, mirrors: [...source.mirrors] }, engineOptions(source, settings));
}

/** Reopens a stored job; its URLs (mirrors included) are in the engine's stored state. */
export function openJob(
  store: DownloadStore,
  id: string,
  source: Omit<JobSource, 'url' | 'mirrors'>,
  settings: Settings,
): Promise<DownloadJob | undefined> {
  return DownloadJob.open(store, id, engineOptions(source, settings));
}

/** The speed limit of the settings, shared by every download (all jobs, all connections). */
export const speedLimit = new RateLimiter();

/**
 * Requests to the URL's origin carry the site's cookies when the job says so (a taken-over
 * download must carry no more than the browser's own request); other origins get none unless a
 * mirror rule allowed them (the engine decides per request: request-trust.ts). The page's
 * `referrer` is passed on by Firefox's background page but dropped by Chrome's worker (it is not
 * same-origin with it): the Referer is set in both by a session rule while the job runs
 * (referrer-rules.ts, held by JobManager).
 */
function engineOptions(source: Omit<JobSource, 'url' | 'mirrors'>, settings: Settings): Partial<EngineOptions> {
  return {
    credentials: source.credentials,
    credentialOrigins: [...source.cookieOrigins],
    referrer: safeReferrer(source.referrer),
    // The setting is the most connections per server: browsers open at most six per host over
    // HTTP/1.1. The engine starts with two and adds more only while they pay.
    maxConnectionsPerServer: settings.connectionsPerServer,
    maxConnectionsPerSite: settings.connectionsPerSite,
    connectionsPerServer: Math.min(2, settings.connectionsPerServer),
    minBlockBytes: settings.minBlockBytes,
    maxBlockBytes: settings.maxBlockBytes,
    rateLimiter: speedLimit,
    userLocation: countryOfLocale(globalThis.navigator?.language),
    createHasher: createWasmHasher,
  };
}

function safeReferrer(referrer: string | undefined): string | undefined {
  return referrer ? parseHttpUrl(referrer)?.href : undefined;
}
