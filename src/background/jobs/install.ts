import type { JobView } from '../../messages';
import type { BrowserStore } from '../../storage/stored-blob-url';
import type { BrowserApi } from '../browser-api';
import type { NetworkRules } from '../network/install';
import type { Saving } from '../saving/install';
import type { SaveCopy } from './disk-room';
import type { SettingsStore } from '../settings-store';
import { JobManager } from './job-manager';
import { JobMetaStore } from './job-meta';
import { KeepAlive, RESTORE_ALARM } from './keep-alive';
import type { EstimateStorage } from './storage-space';

export interface JobsDeps {
  api: BrowserApi;
  settings: SettingsStore;
  store: () => Promise<BrowserStore>;
  estimate: EstimateStorage;
  /** The least a save costs of the free room told (disk-room.ts). */
  saveCopy: SaveCopy;
  saving: Saving;
  network: Pick<NetworkRules, 'referrers' | 'localNetwork'>;
  onView: (job: JobView) => void;
  onRemoved: (id: string) => void;
}

export interface Jobs {
  manager: Promise<JobManager>;
  /** The manager once it read the jobs from the store (once per worker), for those following a job's events. */
  restored: () => Promise<JobManager>;
  /** Resumes the unfinished jobs (each start of the worker, and the restore alarm); logs a failure. */
  restore: () => void;
}

/**
 * The job manager, made once the settings and the store are open, kept alive while jobs run.
 * Registers its listeners synchronously: runtime.onStartup and the restore alarm restore the jobs.
 */
export function installJobs({ api, settings, store, estimate, saveCopy, saving, network, onView, onRemoved }: JobsDeps): Jobs {
  const keepAlive = new KeepAlive(api);
  const manager = (async () => {
    await settings.load();
    return new JobManager({
      store: saving.feeding(await store()),
      meta: new JobMetaStore(api),
      saver: saving.saver,
      orphaned: (jobId) => saving.orphaned(jobId),
      settings: () => settings.current,
      estimate,
      saveCopy,
      onView,
      onRemoved,
      onActivity: (active, unfinished) => keepAlive.update(active, unfinished),
      referrers: network.referrers,
      localNetwork: network.localNetwork,
    });
  })();
  let restored: Promise<JobManager> | undefined;
  const restore = () => void manager.then((m) => m.restore()).catch((error: unknown) => console.error('Stitch: restore failed', error));

  api.runtime.onStartup.addListener(restore);
  api.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name === RESTORE_ALARM) restore();
  });
  return {
    manager,
    restored: () => (restored ??= manager.then(async (m) => (await m.restore().catch(() => {}), m))),
    restore,
  };
}
