import { mirrorUrlsFor } from '../settings/mirror-rules';
import type { BrowserStore } from '../storage/stored-blob-url';
import { Aria2Link } from './aria2/aria2-link';
import type { BrowserApi } from './browser-api';
import { speedLimit } from './jobs/create-job';
import type { SaveCopy } from './jobs/disk-room';
import { installJobs } from './jobs/install';
import type { JobManager } from './jobs/job-manager';
import type { EstimateStorage } from './jobs/storage-space';
import { installNetworkRules } from './network/install';
import { installPlayback } from './playback/install';
import type { StreamScope } from './playback/stream-route';
import type { BlobUrlMaker } from './saving/blob-url';
import { installSaving } from './saving/install';
import { installStreams } from './streams/install';
import { SettingsStore } from './settings-store';
import { installTakeover } from './takeover/install';
import { installUi } from './ui/install';

export interface BackgroundDeps {
  api: BrowserApi;
  /** Opened lazily: listeners must be registered before the first await. */
  store: () => Promise<BrowserStore>;
  blobUrls: BlobUrlMaker;
  estimate: EstimateStorage;
  /** Chrome's service worker scope (found by itself when omitted); absent in Firefox. */
  serviceWorker?: StreamScope;
}

/**
 * Wires the background: each concern registers its listeners synchronously (an MV3 worker woken
 * by an event must have its listener in place before its first await), then jobs are restored.
 * A concern reaches one installed after it only from callbacks, which run once this has returned.
 */
export function startBackground(deps: BackgroundDeps): { manager: Promise<JobManager> } {
  const { api, store } = deps;
  // Chrome's service worker scope: its fetch events serve players and streamed saves.
  const scope = deps.serviceWorker ?? serviceWorkerScope();
  // The least a save costs of the free room the store is told (disk-room.ts): Chrome's streamed save frees the
  // store behind it; Firefox's room told is only the store's limit.
  const saveCopy: SaveCopy = deps.estimate.tracksDisk === false ? 'none' : scope ? 'streamed' : 'whole';
  const settings = new SettingsStore(api, (s) => {
    speedLimit.setRate(s.speedLimitBytesPerSec);
    ui.settingsChanged(s);
    aria2.settingsChanged();
  });
  const mirrorsFor = (url: string) => mirrorUrlsFor(url, settings.current.mirrorRules);

  const network = installNetworkRules(api);
  const playback = installPlayback({ api, jobs: async () => (await jobs.restored()).bytes, store, scope });
  const saving = installSaving({
    api,
    blobUrls: deps.blobUrls,
    hub: playback,
    jobs: async () => (await jobs.restored()).bytes,
    store,
    scope,
  });
  const jobs = installJobs({
    api,
    settings,
    store,
    estimate: deps.estimate,
    saveCopy,
    saving,
    network,
    onView: (job) => {
      ui.jobChanged(job);
      playback.jobChanged(job);
      if (job.state === 'running') takeover.pace.observe(job.rate);
    },
    onRemoved: (id) => {
      ui.jobRemoved(id);
      playback.jobRemoved(id);
    },
  });
  const aria2 = new Aria2Link(
    api,
    () => settings.current,
    (message) => ui.broadcast(message),
    network.localNetwork,
  );
  const takeover = installTakeover({
    api,
    settings,
    manager: jobs.manager,
    network,
    aria2,
    mirrorsFor,
    notice: (message, url) => ui.notice(message, url),
    tookOver: (filename, jobId) => ui.tookOver(filename, jobId),
    watchedChanged: (rows) => ui.broadcast({ type: 'watched', rows }),
    estimate: deps.estimate,
    saveCopy,
  });
  const streams = installStreams({
    api,
    manager: jobs.manager,
    store,
    saver: saving.saver,
    notice: (message, url) => ui.notice(message, url),
    localNetwork: network.localNetwork,
    onChange: (rows) => ui.broadcast({ type: 'streams', rows }),
  });
  const ui = installUi({
    api,
    settings,
    manager: jobs.manager,
    mirrorsFor,
    bypass: takeover.bypass,
    localNetwork: network.localNetwork,
    aria2,
    watcher: takeover.watcher,
    streams,
    playback,
  });

  // Any start of the worker (browser start, kill, alarm, message) puts the rule that stops
  // Stitch's requests to local addresses in place (jobs wait for it before their first request)
  // and resumes unfinished jobs, which set their own rules again; rules of jobs gone are removed.
  // Downloads left with the browser are watched again.
  void network.sessionRules.sync();
  jobs.restore();
  void takeover.watcher.restore().catch((error: unknown) => console.error('Stitch: restoring the watch failed', error));
  return { manager: jobs.manager };
}

/** The global scope when it is a service worker (Chrome), else undefined. */
function serviceWorkerScope(): StreamScope | undefined {
  const SW = (globalThis as { ServiceWorkerGlobalScope?: abstract new () => unknown }).ServiceWorkerGlobalScope;
  return SW !== undefined && globalThis instanceof SW ? (globalThis as unknown as StreamScope) : undefined;
}
