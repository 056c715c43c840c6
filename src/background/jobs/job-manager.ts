import { isQuotaError, normalizeRanges, rangesLength, type DownloadJob, type DownloadStore, type StreamLayout } from '../../engine';
import type { JobAction, JobView, ReplyOf } from '../../messages';
import { mediaTypeOf } from '../../media-type';
import { t } from '../../words/i18n';
import type { Settings } from '../../settings/schema';
import { createJob, jobCookieOrigins, jobSpeedLimit, openJob, type JobCredentials, type JobSource } from './create-job';
import type { JobMeta, JobMetaStore } from './job-meta';
import type { JobSaver } from '../saving/job-saver';
import type { LocalNetworkRules } from '../network/local-network-rules';
import type { ReferrerRules } from '../network/referrer-rules';
import { toJobView } from './job-view';
import { JobQueue, wantsToRun } from './job-queue';
import { JobSaving, type JobEntry } from '../saving/job-saving';
import type { SaveCopy } from './disk-room';
import { JobRoom } from './job-room';
import { SPACE_CHECK_MS, type EstimateStorage } from './storage-space';
import { JobBytes } from './job-bytes';
import { relinkJob } from './job-relink';
import type { HandoffFacts } from '../aria2/handoff';

export interface JobManagerDeps {
  store: DownloadStore;
  meta: JobMetaStore;
  saver: JobSaver;
  settings: () => Settings;
  estimate: EstimateStorage;
  onView: (view: JobView) => void;
  onRemoved: (id: string) => void;
  /** Called whenever jobs start or stop being active (running or saving) or unfinished. */
  onActivity: (active: boolean, unfinished: boolean) => void;
  newId?: () => string;
  /** How often running jobs check free storage. */
  spaceCheckMs?: number;
  /** How long a cancel can be undone (default UNDO_MS; 0: no undo, removed at once). */
  undoMs?: number;
  /** Sets each job's Referer on its requests while it runs (fetch cannot). */
  referrers?: Pick<ReferrerRules, 'hold' | 'release'>;
  /** The least the platform's save costs of the free room told (disk-room.ts); absent: 'whole'. */
  saveCopy?: SaveCopy;
  /** Bytes of a job a streamed save released and then lost (save-release.ts); absent: none ever are. */
  orphaned?: (jobId: string) => number;
  /** Lets a job whose URL is local reach its local origins while it runs (Stitch's requests to local addresses are stopped). */
  localNetwork?: Pick<LocalNetworkRules, 'allow' | 'release' | 'during'>;
}

export interface NewDownload {
  url: string;
  /** 'omit' when the browser's own request carried no cookies (a take-over); default 'include': the user chose the URL. */
  credentials?: JobCredentials;
  referrer?: string;
  filename?: string;
  saveAs?: boolean;
  mirrors?: string[];
  /** Taken over from the browser's own download (it can be handed back). */
  takenOver?: boolean;
  /** What the take-over's probe learned, shown until the job's own first answer. */
  probed?: JobMeta['probed'];
  /**
   * The mirrors and digests the probe's answer announced: a hand-off to aria2 passes them on (a job reads
   * them from its own first answer).
   */
  announced?: { mirrors: string[]; digests: { algorithm: string; hex: string }[] };
  /** A video stream laid out as one file: `url` and `mirrors` are its hosts' playlists. */
  stream?: StreamLayout;
}

const FINISHED_VIEW_STATES = new Set(['saved', 'failed', 'cancelled']);

/**
 * Every job of the extension: the queue under the concurrent-downloads limit (job-queue.ts), user actions,
 * saving when complete, and restoring from the store after the worker or browser died. The
 * store (engine state and bytes) and JobMetaStore are the truth; this map is a cache of them.
 */
export class JobManager {
  private readonly entries = new Map<string, JobEntry>();
  private readonly queue: JobQueue;
  private restoring: Promise<void> | undefined;

  private readonly saves: JobSaving;
  /** The stored bytes as players and the save route read them. */
  readonly bytes: JobBytes;
  /** Room on the disk: jobs held when it lacks room for them. */
  private readonly room: JobRoom;

  constructor(private readonly deps: JobManagerDeps) {
    this.queue = new JobQueue({
      entries: this.entries,
      limit: () => deps.settings().maxConcurrentJobs,
      undoMs: deps.undoMs,
      start: (entry) => this.start(entry),
      pause: (entry) => this.pause(entry),
      remove: (entry) => this.remove(entry),
      act: (id, action) => this.act(id, action),
      updateMeta: (entry, change) => this.updateMeta(entry, change),
      state: (entry) => this.view(entry).state,
      report: (entry) => this.deps.onView(this.view(entry)),
      activity: () => this.reportActivity(),
    });
    this.saves = new JobSaving({
      saver: deps.saver,
      settings: deps.settings,
      updateMeta: (entry, change) => this.updateMeta(entry, change),
      freeBytes: (entry) => this.freeBytes(entry),
      diskFree: () => this.room.diskFree(),
      orphaned: (entry) => deps.orphaned?.(entry.job.id) ?? 0,
      refetch: (entry) => this.refetch(entry),
      tracks: (entry) => this.entries.get(entry.job.id) === entry,
      savingChanged: () => this.reportActivity(),
    });
    this.bytes = new JobBytes({
      entries: this.entries,
      views: () => this.views(),
      get: (id) => this.get(id),
      freeBytes: (entry) => this.freeBytes(entry),
    });
    const running = () => [...this.entries.values()].filter((e) => e.running !== undefined && e.job.state.status === 'running');
    this.room = new JobRoom({
      estimate: deps.estimate,
      platformCopy: deps.saveCopy ?? 'whole',
      spaceCheckMs: deps.spaceCheckMs ?? SPACE_CHECK_MS,
      running,
      updateMeta: (entry, change) => this.updateMeta(entry, change),
    });
  }

  /**
   * Loads jobs not yet known from the store and resumes whatever should be running: unfinished
   * jobs not paused by the user, and complete jobs not yet saved. Safe to call often (worker
   * start, runtime.onStartup, the restore alarm, before any request).
   */
  restore(): Promise<void> {
    this.restoring ??= this.restoreOnce().finally(() => (this.restoring = undefined));
    return this.restoring;
  }

  async add(download: NewDownload): Promise<JobView> {
    await this.restore();
    const id = this.deps.newId?.() ?? crypto.randomUUID();
    const settings = this.deps.settings();
    const credentials = download.credentials ?? 'include';
    const cookieOrigins = jobCookieOrigins(download.url, credentials, settings.mirrorRules);
    const source: JobSource = {
      url: download.url,
      mirrors: download.mirrors ?? [],
      referrer: download.referrer,
      credentials,
      cookieOrigins,
    };
    const meta: JobMeta = {
      id,
      referrer: download.referrer,
      credentials,
      cookieOrigins,
      filename: download.filename,
      saveAs: download.saveAs === true,
      takenOver: download.takenOver === true ? true : undefined,
      probed: download.probed,
      pausedByUser: false,
      createdAt: Date.now(),
      order: this.queue.rankForNew(),
    };
    await this.deps.meta.save(meta);
    const limiter = jobSpeedLimit(undefined);
    const job = await createJob(this.deps.store, id, source, settings, limiter, download.stream);
    const entry = this.track(job, meta, 0, limiter);
    this.queue.settle();
    return this.view(entry);
  }

  views(): JobView[] {
    return [...this.entries.values()].map((e) => this.view(e)).sort((a, b) => b.createdAt - a.createdAt);
  }

  get(id: string): JobView | undefined {
    const entry = this.entries.get(id);
    return entry && this.view(entry);
  }

  meta(id: string): JobMeta | undefined {
    return this.entries.get(id)?.meta;
  }

  /** What another downloader needs to fetch the same file as this job: its URL, mirrors, name, strongest digest and page. */
  handoffFacts(id: string): HandoffFacts | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const { url, mirrors, expected } = entry.job.state;
    return {
      url,
      mirrors,
      name: this.view(entry).filename,
      digests: (expected?.digests ?? []).map(({ algorithm, hex }) => ({ algorithm, hex })),
      ...(entry.meta.referrer ? { referrer: entry.meta.referrer } : {}),
    };
  }

  async act(id: string, action: JobAction): Promise<JobView | undefined> {
    await this.restore();
    const entry = this.entries.get(id);
    if (!entry) throw new Error(t('errorNoSuchDownload'));
    switch (action) {
      case 'pause':
        await this.pause(entry);
        break;
      case 'resume':
      case 'retry':
        await this.wake(entry);
        break;
      case 'cancel':
        await this.queue.cancel(entry);
        break;
      case 'undo':
        await this.queue.undo(entry);
        break;
      case 'start-now':
        await this.queue.startAhead(entry);
        break;
    }
    return this.entries.has(id) ? this.view(entry) : undefined;
  }

  /**
   * Saves again, asking where, a complete job whose save failed (its bytes are still stored);
   * anything else is refused in plain words.
   */
  async saveAs(id: string): Promise<JobView> {
    await this.restore();
    const entry = this.entries.get(id);
    if (!entry) throw new Error(t('errorNoSuchDownload'));
    if (entry.job.state.status !== 'complete' || entry.meta.save?.phase !== 'failed') {
      throw new Error(t('errorSaveAsState'));
    }
    await this.updateMeta(entry, { saveAs: true, save: undefined });
    void this.saves.save(entry);
    return this.view(entry);
  }

  /**
   * Gives a paused or failed job a new URL (an expired link renewed): see relinkJob. A job that
   * kept its bytes, or started over, resumes.
   */
  async relink(id: string, url: string, startOver = false): Promise<ReplyOf<'relink'>> {
    await this.restore();
    const entry = this.entries.get(id);
    if (!entry) throw new Error(t('errorNoSuchDownload'));
    const mismatch = await relinkJob(entry, url, startOver, {
      store: this.deps.store,
      settings: this.deps.settings,
      localNetwork: this.deps.localNetwork,
      state: () => this.view(entry).state,
      updateMeta: (change) => this.updateMeta(entry, change),
    });
    if (mismatch) return { job: this.view(entry), ...mismatch };
    await this.wake(entry);
    return { job: this.view(entry) };
  }

  /** Moves a queued job one place earlier (`up`) or later; the queue starts jobs from its front. */
  async moveInQueue(id: string, direction: 'up' | 'down'): Promise<JobView> {
    await this.restore();
    const entry = this.entries.get(id);
    if (!entry) throw new Error(t('errorMoveState'));
    await this.queue.move(entry, direction);
    return this.view(entry);
  }

  /** Sets a job's own speed limit (bytes/s; null lifts it): at once, running or not, and kept for later runs. */
  async setSpeedLimit(id: string, bytesPerSecond: number | null): Promise<JobView> {
    await this.restore();
    const entry = this.entries.get(id);
    if (!entry) throw new Error(t('errorNoSuchDownload'));
    entry.limiter.setRate(bytesPerSecond);
    await this.updateMeta(entry, { speedLimit: bytesPerSecond ?? undefined });
    return this.view(entry);
  }

  /** Forgets a job and its stored bytes at once, without undo (it was handed to the browser). */
  async forget(id: string): Promise<void> {
    await this.restore();
    const entry = this.entries.get(id);
    if (entry) await this.remove(entry);
  }

  /** Applies the action to every job it makes sense for, or to those of `ids` (job-queue.ts); returns how many. */
  async actAll(action: JobAction, ids?: readonly string[]): Promise<number> {
    await this.restore();
    return this.queue.actAll(action, ids);
  }

  /**
   * Forgets saved and cancelled jobs, and failed ones with nothing stored: a failed job that
   * holds bytes may still be retried (or given a new link), so it stays until removed by hand.
   */
  async clearFinished(): Promise<number> {
    await this.restore();
    const finished = [...this.entries.values()].filter((e) => {
      const state = this.view(e).state;
      if (!FINISHED_VIEW_STATES.has(state) || e.running || e.saving) return false;
      return state !== 'failed' || (e.storedBytes === 0 && e.job.state.status !== 'complete');
    });
    for (const entry of finished) await this.remove(entry);
    return finished.length;
  }

  /** Active: running, or saving. Unfinished: anything that still needs to run or save. */
  activity(): { active: boolean; unfinished: boolean } {
    let active = false;
    let unfinished = false;
    for (const entry of this.entries.values()) {
      if (entry.running || entry.saving) active = true;
      if (wantsToRun(entry) || this.shouldSave(entry)) unfinished = true;
    }
    return { active, unfinished: unfinished || active };
  }

  private async restoreOnce(): Promise<void> {
    const settings = this.deps.settings();
    for (const id of await this.deps.store.listJobs()) {
      if (this.entries.has(id)) continue;
      const meta = await this.deps.meta.load(id);
      const source = { referrer: meta.referrer, credentials: meta.credentials, cookieOrigins: meta.cookieOrigins };
      const limiter = jobSpeedLimit(meta.speedLimit);
      const job = await openJob(this.deps.store, id, source, settings, limiter).catch(() => undefined);
      if (!job) continue; // unreadable state: leave it, never crash the worker
      if (meta.createdAt === 0) meta.createdAt = job.state.createdAt;
      const stored = job.state.status === 'complete' ? 0 : rangesLength(normalizeRanges(await this.deps.store.storedRanges(id)));
      const entry = this.track(job, meta, stored, limiter);
      // Bytes a player kept after saving when the worker died: nobody plays them now.
      if (meta.save?.phase === 'saved') await this.freeBytes(entry);
      // A streamed save's body died with the worker: its partial file goes, a new save starts from the store.
      if (meta.save?.phase === 'saving' && meta.save.streamed) await this.saves.dropStreamed(entry, 'the save broke off');
    }
    for (const entry of [...this.entries.values()]) {
      // Cancelled before the worker stopped: gone once the undo expired, else still undoable.
      this.queue.restored(entry);
      if (!entry.meta.removing && this.shouldSave(entry)) void this.saves.save(entry);
    }
    this.queue.settle();
  }

  private shouldSave(entry: JobEntry): boolean {
    return entry.job.state.status === 'complete' && entry.meta.save?.phase !== 'saved' && entry.meta.save?.phase !== 'failed';
  }

  private track(job: DownloadJob, meta: JobMeta, storedBytes: number, limiter: JobEntry['limiter']): JobEntry {
    const entry: JobEntry = { job, meta, storedBytes, holds: 0, bytesFreed: false, limiter };
    this.entries.set(job.id, entry);
    const changed = () => {
      this.deps.onView(this.view(entry));
      this.saves.streamEarly(entry);
    };
    job.on('progress', changed);
    job.on('status', changed);
    job.on('notice', changed);
    return entry;
  }

  private view(entry: JobEntry): JobView {
    const view = toJobView(entry.job.snapshot(), entry.meta, { storedBytes: entry.storedBytes, queuePlace: this.queue.place(entry) });
    const playable =
      !entry.bytesFreed &&
      view.state !== 'failed' &&
      view.state !== 'cancelled' &&
      mediaTypeOf(view.contentType, view.filename) !== undefined;
    const group = entry.meta.removing?.group;
    return { ...view, ...(playable && { canPlay: true }), ...(group && { undoGroup: group }) };
  }

  private start(entry: JobEntry): void {
    const id = entry.job.id;
    entry.running = (async () => {
      // Before any other await: a take-over hands its rules over to the job without a gap, and no
      // request goes out before the rule that stops requests to local addresses is in place.
      const { url, mirrors } = entry.job.state;
      await Promise.all([this.deps.referrers?.hold(id, url, entry.meta.referrer), this.deps.localNetwork?.allow(id, url, mirrors)]);
      if (!(await this.room.mayStart(entry))) return;
      const final = await entry.job.run();
      entry.storedBytes = final.received;
      // Not again when the user cancelled the browser's streamed save meanwhile: Retry saves it.
      if (final.status === 'complete' && entry.meta.save?.phase !== 'failed') void this.saves.save(entry);
      // The store filled up: hold the job (the engine kept every byte) rather than retry at once.
      if (final.status === 'paused' && final.error?.code === 'storage-full') await this.room.holdForRoom(entry, final.error.message);
    })()
      .catch((error: unknown) => {
        const message = `could not start: ${error instanceof Error ? error.message : String(error)}`;
        // The store's own records refused for want of room (Firefox's quota met on a full disk): held as such.
        return isQuotaError(error) ? this.room.holdForRoom(entry, message) : this.room.hold(entry, message);
      })
      .finally(() => {
        entry.running = undefined;
        // A streamed save waits for bytes that will not come now: it is opened again when the job runs.
        if (entry.job.state.status !== 'complete') void this.saves.dropStreamed(entry, 'the download stopped');
        // Kept only while the job runs: a restored or resumed job holds them again when it starts.
        void this.deps.referrers?.release(id);
        void this.deps.localNetwork?.release(id);
        // Resumed by the user while it was still stopping: it waits again, at its place.
        this.deps.onView(this.view(entry));
        this.queue.settle();
      });
    this.deps.onView(this.view(entry));
  }

  /** Stops the job if it runs and runs it again, reopened if complete: it plans from the store and fetches what is missing. */
  private async refetch(entry: JobEntry): Promise<void> {
    entry.job.pause();
    await entry.running;
    await entry.job.reopen();
    this.queue.settle();
  }

  private async pause(entry: JobEntry): Promise<void> {
    await this.updateMeta(entry, { pausedByUser: true });
    entry.job.pause();
    await entry.running;
    this.queue.settle();
  }

  /** Resume and retry: run again what is unfinished, save again what failed to save. */
  private async wake(entry: JobEntry): Promise<void> {
    await this.updateMeta(entry, { pausedByUser: false, heldFor: undefined, heldRoom: undefined });
    if (entry.job.state.status === 'complete') {
      if (entry.meta.save?.phase === 'failed') await this.updateMeta(entry, { save: undefined });
      if (this.shouldSave(entry)) void this.saves.save(entry);
      return;
    }
    if (entry.job.state.status === 'cancelled') return;
    this.queue.settle();
  }

  private async remove(entry: JobEntry): Promise<void> {
    this.queue.leave(entry.job.id);
    await entry.job.cancel();
    await entry.running;
    await this.deps.meta.remove(entry.job.id);
    this.entries.delete(entry.job.id);
    this.deps.onRemoved(entry.job.id);
    this.queue.settle();
  }

  private async freeBytes(entry: JobEntry): Promise<void> {
    await this.deps.store.clearBytes(entry.job.id);
    entry.bytesFreed = true;
    this.deps.onView(this.view(entry));
  }

  private async updateMeta(entry: JobEntry, change: Partial<JobMeta>): Promise<void> {
    entry.meta = { ...entry.meta, ...change };
    await this.deps.meta.save(entry.meta);
    this.deps.onView(this.view(entry));
    this.reportActivity();
  }

  private reportActivity(): void {
    const { active, unfinished } = this.activity();
    this.deps.onActivity(active, unfinished);
  }
}
