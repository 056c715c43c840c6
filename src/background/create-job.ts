import { DownloadJob, RateLimiter, type DownloadStore, type EngineOptions } from '../engine';
import type { Settings } from '../settings/schema';
import { createWasmHasher } from './wasm-hasher';

/** What the background knows when it starts a download. */
export interface JobSource {
  url: string;
  /** Further URLs of the same file (from the mirror rules). */
  mirrors: readonly string[];
  referrer?: string;
}

/**
 * The one place where engine jobs are made and reopened, so the engine's signature (e.g. a list
 * of mirror URLs) is adapted here only.
 */
export function createJob(store: DownloadStore, id: string, source: JobSource, settings: Settings): Promise<DownloadJob> {
  return DownloadJob.create(store, { id, url: source.url, mirrors: [...source.mirrors] }, engineOptions(source, settings));
}

export function openJob(store: DownloadStore, id: string, source: Omit<JobSource, 'url'>, settings: Settings): Promise<DownloadJob | undefined> {
  return DownloadJob.open(store, id, engineOptions(source, settings));
}

/** The speed limit of the settings, shared by every download (all jobs, all connections). */
export const speedLimit = new RateLimiter();

/**
 * Requests carry the site's cookies (a taken-over download must be fetched as the browser
 * would). The page's `referrer` is passed on by Firefox's background page but dropped by
 * Chrome's worker (it is not same-origin with it): the Referer is set in both by a session rule
 * while the job runs (referrer-rules.ts, held by JobManager).
 */
function engineOptions(source: Omit<JobSource, 'url'>, settings: Settings): Partial<EngineOptions> {
  return {
    credentials: 'include',
    referrer: safeReferrer(source.referrer),
    connectionsPerServer: settings.connectionsPerServer,
    minBlockBytes: settings.minBlockBytes,
    maxBlockBytes: settings.maxBlockBytes,
    rateLimiter: speedLimit,
    createHasher: createWasmHasher,
  };
}

function safeReferrer(referrer: string | undefined): string | undefined {
  if (!referrer) return undefined;
  try {
    const url = new URL(referrer);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
