import type { DownloadJob, RateLimiter } from '../../engine';
import type { Settings } from '../../settings/schema';
import type { JobMeta } from '../jobs/job-meta';
import type { JobSaver } from './job-saver';
import { filenameOf } from '../jobs/job-view';
import { noRoomMessage, roomToFinish, saveCopyFor, shortOfRoom, type SaveCopy } from '../jobs/disk-room';
import type { SaveRecord } from '../jobs/job-meta';

/** One job as the job manager tracks it. */
export interface JobEntry {
  job: DownloadJob;
  meta: JobMeta;
  storedBytes: number;
  running?: Promise<void>;
  saving?: Promise<void>;
  /** Players playing the stored bytes: they are kept after saving until the last one leaves. */
  holds: number;
  /** Saved, and the stored copy deleted. */
  bytesFreed: boolean;
  /** The job's own speed limit (under the settings' one), set again while it runs. */
  limiter: RateLimiter;
  /** The disk holds the file once, not twice: Chrome's streamed save, freeing the store behind it, saves it (disk-room.ts). */
  streamForRoom?: boolean;
}

/** What saving needs from the job manager. */
export interface JobSavingHost {
  saver: JobSaver;
  settings: () => Settings;
  updateMeta(entry: JobEntry, change: Partial<JobMeta>): Promise<void>;
  /** Deletes the stored copy of a saved job. */
  freeBytes(entry: JobEntry): Promise<void>;
  /** The disk's free bytes as the store's quota tells them, or undefined. */
  diskFree(): Promise<number | undefined>;
  /** Bytes of the job a streamed save released that ended without the file (gone from the store); 0 if none. */
  orphaned(entry: JobEntry): number;
  /** Runs the job again (a complete one reopened) to fetch what is missing from the store. */
  refetch(entry: JobEntry): Promise<void>;
  /** Still one of the manager's jobs (not removed meanwhile). */
  tracks(entry: JobEntry): boolean;
  /** Saving started or ended: the worker's keep-alive follows. */
  savingChanged(): void;
}

/**
 * Saving a job through the browser: once complete, or in Chrome with the setting on, streamed
 * while it downloads. The save's phase lives in the job's meta, so a restarted worker knows it.
 */
export class JobSaving {
  constructor(private readonly host: JobSavingHost) {}

  /** Saves a complete job through the browser, then frees its stored bytes. */
  save(entry: JobEntry): Promise<void> {
    entry.saving ??= this.saveOnce(entry).finally(() => {
      entry.saving = undefined;
      this.host.savingChanged();
    });
    this.host.savingChanged();
    return entry.saving;
  }

  /**
   * Chrome: once a running job knows its size (and so its name), its save starts at once and
   * streams while it downloads. Not with "ask where to save": a navigation's download follows
   * the browser's own setting.
   */
  streamEarly(entry: JobEntry): void {
    const snapshot = entry.job.snapshot();
    if (!(this.whileDownloading || entry.streamForRoom) || entry.saving || entry.meta.save || entry.meta.removing || entry.meta.saveAs)
      return;
    if (snapshot.status !== 'running' || snapshot.size === undefined || !this.host.tracks(entry)) return;
    void this.save(entry);
  }

  /** Cancels the job's streamed save in the browser (its partial file is deleted) and forgets it. */
  async dropStreamed(entry: JobEntry, reason: string): Promise<void> {
    const save = entry.meta.save;
    if (save?.phase !== 'saving' || !save.streamed) return;
    if (save.downloadId !== undefined) await this.host.saver.cancel(save.downloadId, reason);
    // A job removed meanwhile keeps no meta.
    if (this.host.tracks(entry)) await this.host.updateMeta(entry, { save: undefined });
  }

  /**
   * Why a save the browser ended for its disk failed, as the save record says it: the room missing
   * when the store's disk is short of it; else a full disk the store does not see (the download
   * folder on another one); a write that failed with room enough is no full disk.
   */
  private async diskEnd(disk: 'full' | 'failed', size: number): Promise<Pick<SaveRecord, 'room' | 'folderFull' | 'writeFailed'>> {
    const free = await this.host.diskFree();
    const room = shortOfRoom(size, free);
    if (room) return { room };
    if (disk === 'full') return { folderFull: true };
    // A failed write where the disk's room is not told (Firefox says FILE_FAILED when its disk is full).
    return free === undefined ? { writeFailed: true } : {};
  }

  /**
   * How the job's save copies it: streamed where Chrome can and the user asked for it, or the disk
   * holds the file once but not twice (the store frees its chunks behind the browser's writing);
   * else a blob of the whole stored file.
   */
  private async copyFor(entry: JobEntry, size: number | undefined): Promise<SaveCopy> {
    if (!this.host.saver.streams || entry.meta.saveAs || size === undefined) return 'whole';
    if (this.whileDownloading || entry.streamForRoom) return 'streamed';
    return saveCopyFor(size, size, await this.host.diskFree(), 'streamed');
  }

  /** Chrome can, and the user asked for it (the setting is off by default: it measured slower on 2 cores). */
  private get whileDownloading(): boolean {
    return this.host.saver.streams && this.host.settings().saveWhileDownloading;
  }

  private async saveOnce(entry: JobEntry, again = false): Promise<void> {
    const { host } = this;
    const snapshot = entry.job.snapshot();
    try {
      // A save started before the worker restarted is awaited, not started twice.
      let downloadId = entry.meta.save?.phase === 'saving' ? entry.meta.save.downloadId : undefined;
      let streamed = entry.meta.save?.streamed;
      const resumed = downloadId !== undefined;
      if (downloadId === undefined) {
        await host.updateMeta(entry, { save: { phase: 'saving' } });
        const target = {
          jobId: entry.job.id,
          filename: filenameOf(snapshot, entry.meta),
          size: snapshot.size ?? 0,
          contentType: snapshot.contentType,
          saveAs: entry.meta.saveAs,
        };
        const copy = await this.copyFor(entry, snapshot.size);
        streamed = copy === 'streamed' ? true : undefined;
        // Said before the browser fails half-way (a running job's room was checked when it started).
        const complete = entry.job.state.status === 'complete';
        const room = complete ? shortOfRoom(roomToFinish(target.size, target.size, copy), await host.diskFree()) : undefined;
        if (room) return await host.updateMeta(entry, { save: { phase: 'failed', error: noRoomMessage(room), room } });
        const started = streamed ? { id: await host.saver.startStreamed(target) } : await host.saver.start(target);
        downloadId = started.id;
        await host.updateMeta(entry, { save: { phase: 'saving', downloadId, streamed, renamedFrom: started.renamedFrom } });
      }
      const end = await host.saver.finished(downloadId);
      const complete = entry.job.state.status === 'complete';
      if (end.ok && complete) {
        // A player still playing keeps them; the last one to leave frees them.
        if (entry.holds === 0) await host.freeBytes(entry);
        await host.updateMeta(entry, {
          save: { phase: 'saved', downloadId, filename: end.filename, renamedFrom: entry.meta.save?.renamedFrom },
        });
      } else if (streamed && !end.ok && host.orphaned(entry) > 0) {
        // The store gave back what the browser had written (save-release.ts) and the browser's file
        // is gone with the save: the job fetches those bytes again, then saves anew.
        await this.dropStreamed(entry, end.error);
        await host.refetch(entry);
      } else if (streamed && !end.ok && !end.byUser) {
        // The stream ended early (the job stopped or failed, the worker died, bytes were replaced):
        // its partial file goes; a job still on its way streams again, a complete one saves again.
        await this.dropStreamed(entry, end.error);
        if (complete && !again && host.tracks(entry)) await this.saveOnce(entry, true);
      } else if (resumed && !end.ok && end.gone && !again) {
        // The browser lost the save begun before a restart: start a new one, once.
        await host.updateMeta(entry, { save: undefined });
        await this.saveOnce(entry, true);
      } else {
        // The browser says its disk filled, or failed a write while the disk has no room for the file: said so, in words of room.
        const disk = end.ok || !end.disk ? {} : await this.diskEnd(end.disk, snapshot.size ?? 0);
        const error = end.ok ? 'the file was incomplete' : end.error;
        await host.updateMeta(entry, { save: { phase: 'failed', downloadId, error, ...disk } });
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await host.updateMeta(entry, { save: { phase: 'failed', error: `could not save the file: ${message}` } });
    }
  }
}
