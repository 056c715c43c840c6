import type { WatchedRow } from '../../messages';
import type { BrowserApi } from '../browser-api';
import type { Aria2Link } from '../aria2/aria2-link';
import type { JobManager } from '../jobs/job-manager';
import type { NetworkRules } from '../network/install';
import type { SettingsStore } from '../settings-store';
import type { SaveCopy } from '../jobs/disk-room';
import { freeBytes, type EstimateStorage } from '../jobs/storage-space';
import { Bypass } from './bypass';
import { CappedHosts } from './capped-hosts';
import { DownloadWatcher, WATCH_ALARM } from './download-watcher';
import { measuring } from './start-measure';
import { StitchPace } from './stitch-pace';
import { rescue, takeOver, type TakeoverDeps } from './takeover';

export interface TakeoverInstallDeps {
  api: BrowserApi;
  settings: SettingsStore;
  manager: Promise<JobManager>;
  network: Pick<NetworkRules, 'posts' | 'referrers' | 'localNetwork'>;
  aria2: Pick<Aria2Link, 'sendByRule'>;
  mirrorsFor: (url: string) => string[];
  notice: (message: string, url?: string) => Promise<unknown>;
  /** Tells the toolbar a download was taken over. */
  tookOver: (filename: string, jobId: string) => void;
  /** Tells the pages the downloads left with the browser, as watched now. */
  watchedChanged: (rows: WatchedRow[]) => void;
  /** The store's free quota: a download Stitch needs twice the room for stays with the browser (disk-room.ts). */
  estimate: EstimateStorage;
  /** The least a save costs of that free room (disk-room.ts). */
  saveCopy: SaveCopy;
}

export interface Takeover {
  /** Leaving downloads to the browser on request (the next one, or a site's). */
  bypass: Bypass;
  /** Downloads left with the browser: resumed when they break, taken over when the browser cannot finish them. */
  watcher: DownloadWatcher;
  /** Stitch's own pace, learned from its jobs' rates (the start probe compares the browser with it). */
  pace: StitchPace;
}

/** Taking the browser's downloads over. Registers downloads.onCreated synchronously. */
export function installTakeover({
  api,
  settings,
  manager,
  network,
  aria2,
  mirrorsFor,
  notice,
  tookOver,
  watchedChanged,
  estimate,
  saveCopy,
}: TakeoverInstallDeps): Takeover {
  const bypass = new Bypass(api, settings);
  const cappedHosts = new CappedHosts(api.storage);
  const pace = new StitchPace(api.storage);
  const takeoverDeps = (m: JobManager): TakeoverDeps => ({
    api,
    settings: () => settings.load(),
    posts: network.posts,
    add: async (download) => {
      if (await aria2.sendByRule(download, (message) => notice(message, download.url))) return;
      const job = await m.add(download);
      tookOver(job.filename, job.id);
      return job;
    },
    notice,
    mirrorsFor,
    referrers: network.referrers,
    localNetwork: network.localNetwork,
    leaveNext: (url) => bypass.takeNext(url),
    watch: (item) => watcher.watch(item),
    cappedHosts,
    measure: measuring(api.downloads, pace),
    freeBytes: () => freeBytes(estimate),
    saveCopy,
  });
  const watcher = new DownloadWatcher({
    api,
    rescue: async (item, why) => rescue(item, why, takeoverDeps(await manager)),
    notice,
    onChange: watchedChanged,
    stallTimeoutMs: async () => (await settings.load()).stallSeconds * 1000,
  });
  api.downloads.onCreated.addListener((item) => {
    void manager.then((m) => takeOver(item, takeoverDeps(m))).catch((error: unknown) => console.error('Stitch: take-over failed', error));
  });
  // A worker woken by the watch's alarm watches again what it watched before it was stopped.
  api.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === WATCH_ALARM)
      void watcher.restore().catch((error: unknown) => console.error('Stitch: restoring the watch failed', error));
  });
  return { bypass, watcher, pace };
}
