import type { DownloadStore } from '../../engine';
import type { BrowserStore } from '../../storage/stored-blob-url';
import type { BrowserApi } from '../browser-api';
import type { PlaybackHub, PlaybackJobs } from '../playback/playback';
import type { StreamScope } from '../playback/stream-route';
import type { BlobUrlMaker } from './blob-url';
import { JobSaver } from './job-saver';
import { SaveFeed } from './save-feed';
import { installSaveRoute } from './save-route';

export interface SavingDeps {
  api: BrowserApi;
  blobUrls: BlobUrlMaker;
  hub: PlaybackHub;
  jobs: () => Promise<PlaybackJobs>;
  store: () => Promise<BrowserStore>;
  /** Chrome's service worker scope; absent in Firefox. */
  scope: StreamScope | undefined;
}

export interface Saving {
  saver: JobSaver;
  /** The store the jobs write to: with the save route, one that feeds it the blocks just stored. */
  feeding<S extends DownloadStore>(store: S): S;
  /** Bytes of a job a streamed save released and then lost (save-release.ts); 0 if none. */
  orphaned(jobId: string): number;
}

/**
 * Handing finished (or, in Chrome, still downloading) jobs to the browser's downloads. Registers
 * its listeners synchronously: the saver's downloads.onChanged, and (Chrome) the worker's save route.
 */
export function installSaving({ api, blobUrls, hub, jobs, store, scope }: SavingDeps): Saving {
  const saver = new JobSaver(api, blobUrls);
  if (!scope) return { saver, feeding: (jobStore) => jobStore, orphaned: () => 0 };
  const feed = new SaveFeed();
  // The worker's save route streams saves while they download, taking just-stored blocks from memory.
  installSaveRoute(scope, { hub, jobs, store, feed });
  return { saver, feeding: (jobStore) => feed.feeding(jobStore), orphaned: (jobId) => feed.releases.orphaned(jobId) };
}
