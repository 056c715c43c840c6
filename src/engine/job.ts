import type { DownloadStore, JobStateRecord } from './store';
import { normalizeRanges, rangesLength, type ByteRange } from './ranges';
import { realClock } from './clock';
import { Emitter } from './emitter';
import { DownloadError } from './errors';
import { parseJobState, type ExpectedIntegrity, type JobError, type JobState, type JobStatus } from './job-state';
import { digestMismatch, verificationAlgorithm, type HexDigest } from './integrity/expected';
import { PrefixHasher } from './integrity/prefix-hasher';
import { reverifySegments } from './integrity/reverify';
import { ifRangeValidator } from './remote-file';
import { jobOptions, MAX_SOURCES, type EngineOptions, type RequestContext } from './options';
import { englishRestart, type JobNotice, type RestartCause, type StoredNotice } from './notice';
import { ProgressRate, QUIET_PROGRESS_MS } from './progress-rate';
import type { RemoteFile } from './remote-file';
import { MirrorScheduler } from './scheduler/loop/scheduler';
import type { Playback } from './scheduler/policies/views';
import type { SchedulerHost } from './transfer-host';
import type { SourceHint } from './sources/hrw';
import type { MirrorReport } from './scheduler/loop/mirror-state';
import { transferFromSource } from './transfer';
import type { StreamLayout } from './streams/stream-layout';

/** What the UI shows of a job at one moment. */
export interface JobSnapshot {
  id: string;
  url: string;
  status: JobStatus;
  filename?: string;
  contentType?: string;
  size?: number;
  /** Bytes received so far (stored, or on their way to the store). */
  received: number;
  /** Bytes per second over the last few seconds (RATE_WINDOW_MS); 0 while stalled. */
  rate: number;
  /** Seconds left at the current rate, when size and rate are known (never while stalled). */
  etaSeconds?: number;
  /**
   * Running, but nothing has arrived for STALLED_AFTER_MS and no speed limit holds the bytes back:
   * the engine waits on its stall timeout, or reconnects.
   */
  stalled?: true;
  error?: JobError;
  notices: StoredNotice[];
  /** Every source's share and health (the primary first). */
  mirrors: MirrorReport[];
  /** A video stream's segments laid out as one file: only Stitch can download it so (not the browser, not aria2). */
  stream?: true;
}

interface JobEvents extends Record<string, unknown> {
  progress: JobSnapshot;
  status: JobSnapshot;
  notice: JobNotice;
  /** Bytes [start, end) were stored: listeners read them instead of polling the store. */
  stored: ByteRange;
  /** Stored bytes [start, end) were forgotten (a failed hash, a lying mirror, a restart). */
  discarded: ByteRange;
}

const PAUSE = Symbol('pause');
const CANCEL = Symbol('cancel');

/**
 * One download: a state machine (queued → running ⇄ paused → verifying → complete | failed |
 * cancelled) whose every fact lives in the store, so it can be reopened after the process dies.
 */
export class DownloadJob extends Emitter<JobEvents> {
  private controller: AbortController | undefined;
  private running: Promise<JobSnapshot> | undefined;
  private meter: ProgressRate;
  private receivedBytes = 0;
  private lastProgressAt = 0;
  private saving: Promise<void> = Promise.resolve();
  /** The state changed since the last save began. */
  private unsaved = false;
  /** Cancelled: nothing may be saved for this job any more. */
  private deleted = false;
  private mirrorReports: MirrorReport[] = [];
  private hasher: PrefixHasher | undefined;
  /** The last transfer's scheduler: it knows which mirror sent which bytes. */
  private scheduler: MirrorScheduler | undefined;
  /** Where the job's players are, the most recently moved first. */
  private playbackCursors: readonly Playback[] = [];

  /** Every request's rules (cookies, referrer, where redirects may lead) are judged against the job's URL. */
  private requestOptions: EngineOptions;

  private constructor(
    private readonly store: DownloadStore,
    private jobState: JobState,
    /** What the job was made or reopened with; its options are built from it for the job's URL. */
    private given: Partial<EngineOptions> | undefined,
  ) {
    super();
    this.requestOptions = jobOptions(given, jobState.url, jobState.stream);
    this.meter = new ProgressRate(this.requestOptions.clock);
  }

  /** Creates and persists a new job for `url`. */
  static async create(
    store: DownloadStore,
    init: {
      id: string;
      url: string;
      mirrors?: string[];
      hints?: Record<string, SourceHint>;
      expected?: ExpectedIntegrity;
      /** A stream's layout: `url` and `mirrors` are its sources' playlists. */
      stream?: StreamLayout;
    },
    options?: Partial<EngineOptions>,
  ): Promise<DownloadJob> {
    const now = (options?.clock ?? realClock).now();
    const mirrors = newSources([init.url], init.mirrors ?? []);
    const state: JobState = {
      version: 1,
      id: init.id,
      url: init.url,
      mirrors,
      hints: init.hints,
      expected: init.expected,
      stream: init.stream,
      status: 'queued',
      restarts: 0,
      notices: [],
      createdAt: now,
      updatedAt: now,
    };
    const job = new DownloadJob(store, state, options);
    await job.persist();
    return job;
  }

  /** Reopens a job from the store, or undefined if none (or an unreadable one) is stored. */
  static async open(store: DownloadStore, id: string, options?: Partial<EngineOptions>): Promise<DownloadJob | undefined> {
    const state = parseJobState(await store.loadState(id));
    return state && new DownloadJob(store, state, options);
  }

  get id(): string {
    return this.jobState.id;
  }

  get options(): EngineOptions {
    return this.requestOptions;
  }

  /**
   * The options the job would have at `url`, its request context changed by `request`: what a
   * new address is checked with (checkRelink) before the job takes it. `url` is then the one the
   * user chose: it gets the job's cookies and referrer, and may be in a local network.
   */
  optionsAt(url: string, request: Partial<RequestContext> = {}): EngineOptions {
    return jobOptions({ ...this.given, ...request }, url);
  }

  get state(): Readonly<JobState> {
    return this.jobState;
  }

  snapshot(): JobSnapshot {
    const { id, url, status, file, error, notices } = this.jobState;
    const running = status === 'running';
    const heldBack = this.requestOptions.rateLimiter?.holding ?? false;
    const rate = running ? this.meter.rate(heldBack) : 0;
    const stalled = running && this.meter.stalled(heldBack);
    const size = file?.size;
    const received = size === undefined ? this.receivedBytes : Math.min(this.receivedBytes, size);
    return {
      id,
      url,
      status,
      filename: file?.filename,
      contentType: file?.contentType,
      size,
      received,
      rate,
      etaSeconds: size !== undefined && rate > 0 ? (size - received) / rate : undefined,
      ...(stalled ? { stalled: true as const } : {}),
      error,
      notices: [...notices],
      mirrors: this.mirrorReports,
      ...(this.jobState.stream ? { stream: true as const } : {}),
    };
  }

  /**
   * Downloads until the file is complete, the job is paused or cancelled, or it fails. Resolves
   * with the final snapshot; never rejects for download problems (they end in `failed`).
   */
  run(): Promise<JobSnapshot> {
    this.running ??= this.runOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * Points a stopped job at a new URL of the same file (checked by `checkRelink`) with what
   * that server said of it; `file` undefined starts over (the caller cleared the stored bytes).
   * Its requests' rules follow the new URL (see optionsAt), with `request` changing their context.
   */
  async relink(url: string, file: RemoteFile | undefined, request: Partial<RequestContext> = {}): Promise<void> {
    if (this.running) throw new Error('pause the download before changing its address');
    if (this.jobState.stream) throw new Error("a stream's address cannot be changed: download it again from its page");
    if (!file) {
      this.receivedBytes = 0;
      this.hasher = undefined;
    }
    const status = this.jobState.status === 'failed' ? 'paused' : this.jobState.status;
    const mirrors = this.jobState.mirrors.filter((m) => m !== url);
    this.given = { ...this.given, ...request };
    this.requestOptions = jobOptions(this.given, url);
    this.jobState = { ...this.jobState, url, file, mirrors, status, error: undefined };
    await this.persist();
    this.emit('status', this.snapshot());
  }

  /**
   * A complete job whose stored bytes went (a save that gave back their space failed): paused, so
   * that `run` fetches what the store is missing and verifies the file again.
   */
  async reopen(): Promise<void> {
    if (this.running || this.jobState.status !== 'complete') return;
    this.jobState = { ...this.jobState, status: 'paused', error: undefined };
    await this.persist();
    this.emit('status', this.snapshot());
  }

  /** Replaces what the file must hash to (the user's latest word wins over a saved one). */
  async setExpected(expected: ExpectedIntegrity | undefined): Promise<void> {
    this.jobState = { ...this.jobState, expected };
    await this.persist();
  }

  /**
   * Tells the scheduler where the job's players are, the most recently moved first (several
   * pages may play one job): bytes [position, position + aheadBytes) of each come first. Empty:
   * nobody plays. Playback never changes which bytes are stored.
   */
  setPlayback(playbacks: readonly Playback[]): void {
    this.playbackCursors = playbacks;
    this.scheduler?.wake();
  }

  /** Stops the transfer, keeping every stored byte; `run` resumes. */
  pause(): void {
    if (this.controller) this.controller.abort(PAUSE);
    else if (this.jobState.status === 'queued') void this.setStatus('paused');
  }

  /** Stops the transfer and deletes the job and its bytes. */
  async cancel(): Promise<void> {
    if (this.running) {
      this.controller?.abort(CANCEL);
      await this.running;
    } else {
      await this.forget();
    }
  }

  /** Deletes the job's bytes and state, after any save in flight, so nothing brings it back. */
  private async forget(): Promise<void> {
    this.deleted = true;
    await this.saving.catch(() => {});
    await this.store.deleteJob(this.id);
    this.jobState = { ...this.jobState, status: 'cancelled' };
    this.emit('status', this.snapshot());
  }

  private async runOnce(): Promise<JobSnapshot> {
    // `deleted`: cancelled while not running, the deletion still under way (status not yet set).
    if (this.deleted || this.jobState.status === 'complete' || this.jobState.status === 'cancelled') return this.snapshot();
    const controller = (this.controller = new AbortController());
    this.meter = new ProgressRate(this.requestOptions.clock);
    this.receivedBytes = rangesLength(normalizeRanges(await this.store.storedRanges(this.id)));
    await this.setStatus('running', undefined);
    const stopHashing = this.hashWhileDownloading();
    const stopTicking = this.progressWhileQuiet();
    try {
      // Paused or cancelled while starting (before the transfer listens to the signal).
      controller.signal.throwIfAborted();
      await this.transfer(controller.signal);
      stopHashing();
      await this.setStatus('verifying');
      await this.verify(controller.signal);
      await this.setStatus('complete');
    } catch (error) {
      stopHashing();
      await this.settle(error, controller.signal);
    } finally {
      stopTicking();
      this.controller = undefined;
    }
    return this.snapshot();
  }

  /**
   * While the job runs, a progress event at least every QUIET_PROGRESS_MS even when no byte
   * comes: the pages see the speed fall to 0 and the download stalled, not its last numbers.
   */
  private progressWhileQuiet(): () => void {
    const clock = this.options.clock;
    const tick = () => {
      cancel = clock.after(QUIET_PROGRESS_MS, tick);
      if (this.jobState.status === 'running' && clock.now() - this.lastProgressAt >= QUIET_PROGRESS_MS) this.emitProgress(true);
    };
    let cancel = clock.after(QUIET_PROGRESS_MS, tick);
    return () => cancel();
  }

  private async settle(error: unknown, signal: AbortSignal): Promise<void> {
    if (signal.aborted && signal.reason === CANCEL) {
      await this.forget();
    } else if (signal.aborted && signal.reason === PAUSE) {
      await this.setStatus('paused');
    } else if (error instanceof DownloadError) {
      // A full disk pauses: every stored byte is kept and the user can resume after freeing space.
      await this.setStatus(error.code === 'storage-full' ? 'paused' : 'failed', { ...error.facts, message: error.message });
    } else {
      const message = error instanceof Error ? error.message : String(error);
      await this.setStatus('failed', { code: 'internal', message });
    }
  }

  /** Every digest announced for the file, by the server, a Metalink file or the user. */
  private knownDigests(): HexDigest[] {
    return [...(this.jobState.expected?.digests ?? []), ...(this.jobState.file?.digests ?? [])];
  }

  /**
   * Hashes the stored prefix as it grows, so verification at the end is short: on every stored
   * range, with the strongest algorithm known so far (digests may arrive mid-download).
   * Returns the function that stops it.
   */
  private hashWhileDownloading(): () => void {
    return this.on('stored', ({ start, end }) => {
      const algorithm = verificationAlgorithm(this.knownDigests());
      if (algorithm && this.hasher?.algorithm !== algorithm) {
        this.hasher = new PrefixHasher(this.store, this.id, algorithm, this.options.createHasher);
      }
      void this.hasher?.stored(start, end);
    });
  }

  /** The stored bytes must make up exactly [0, size) and match every announced digest. */
  private async verify(signal: AbortSignal): Promise<void> {
    const stored = normalizeRanges(await this.store.storedRanges(this.id));
    const size = this.jobState.file?.size;
    const only = stored[0];
    const exact = size === 0 ? stored.length === 0 : stored.length === 1 && only?.start === 0 && only.end === size;
    if (size === undefined || !exact) {
      const have = stored.map((r) => `${r.start}–${r.end}`).join(', ') || 'nothing';
      throw new DownloadError('verify', `the stored bytes (${have}) do not make up the ${size ?? 'unknown'}-byte file`);
    }
    const expectedSize = this.jobState.expected?.size;
    if (expectedSize !== undefined && expectedSize !== size) {
      throw new DownloadError('verify', `the server sent ${size} bytes, but ${expectedSize} were expected`);
    }
    const digests = this.knownDigests();
    const algorithm = verificationAlgorithm(digests);
    if (!algorithm) return;
    if (this.hasher?.algorithm !== algorithm) this.hasher = new PrefixHasher(this.store, this.id, algorithm, this.options.createHasher);
    let mismatch = digestMismatch(digests, algorithm, await this.hasher.finish(size));
    if (mismatch && (await this.reverifyMirrors(signal))) {
      this.hasher = new PrefixHasher(this.store, this.id, algorithm, this.options.createHasher);
      mismatch = digestMismatch(digests, algorithm, await this.hasher.finish(size));
    }
    if (mismatch) {
      // Known-bad bytes are worth nothing: a retry starts clean.
      await this.store.clearBytes(this.id);
      this.emit('discarded', { start: 0, end: size });
      this.hasher = undefined;
      throw new DownloadError('verify', `${mismatch}; the downloaded bytes were discarded and nothing was saved`);
    }
  }

  /**
   * The mirror scheduler does every download whose size is known and whose server does ranges
   * (one source included); one plain stream does the rest.
   */
  private async transfer(signal: AbortSignal): Promise<void> {
    const host = this.transferHost();
    const file = this.jobState.file;
    const streamOnly = file !== undefined && (!file.acceptRanges || file.size === undefined);
    this.scheduler = streamOnly ? undefined : new MirrorScheduler(host, signal);
    if (this.scheduler && (await this.scheduler.run()) === 'done') return;
    await transferFromSource(host, signal);
  }

  /**
   * Block-level re-verification after a digest mismatch: every range a mirror sent is fetched
   * again from the primary and compared; differing ranges are replaced and their mirrors
   * dropped. Returns whether any bytes were replaced.
   */
  private async reverifyMirrors(signal: AbortSignal): Promise<boolean> {
    const segments = this.scheduler?.mirrorSegments() ?? [];
    if (segments.length === 0) return false;
    const { url, file } = this.jobState;
    this.notice({ kind: 'reverifying', ranges: segments.length, url });
    const primary = { url, validator: file && ifRangeValidator(file) };
    const liars = await reverifySegments({ store: this.store, jobId: this.id, primary, options: this.options, signal }, segments);
    for (const liar of liars) this.notice({ kind: 'replaced', mirror: liar, url });
    this.jobState = { ...this.jobState, mirrors: this.jobState.mirrors.filter((m) => !liars.has(m)) };
    await this.persist();
    return liars.size > 0;
  }

  private transferHost(): SchedulerHost {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const job = this;
    return {
      store: this.store,
      jobId: this.id,
      url: this.jobState.url,
      sources: [this.jobState.url, ...this.jobState.mirrors],
      mirrorsChanged: (reports) => {
        // A source starting or stopping to fail, or failing once more, changes nothing else the pages see: tell them.
        const before = retryState(this.mirrorReports);
        this.mirrorReports = reports;
        if (retryState(reports) !== before) this.emitProgress(true);
      },
      addSources: async (urls, hints = {}) => {
        const added = newSources([this.jobState.url, ...this.jobState.mirrors], urls);
        if (added.length === 0) return added;
        const kept = Object.fromEntries(added.flatMap((url) => (hints[url] ? [[url, hints[url]]] : [])));
        this.jobState = { ...this.jobState, mirrors: [...this.jobState.mirrors, ...added], hints: { ...this.jobState.hints, ...kept } };
        await this.persist();
        return added;
      },
      addExpected: async (expected) => {
        const current = this.jobState.expected;
        this.jobState = {
          ...this.jobState,
          expected: {
            size: current?.size ?? expected.size,
            digests: [...(current?.digests ?? []), ...expected.digests],
            pieces: current?.pieces ?? expected.pieces,
          },
        };
        await this.persist();
      },
      sourceHint: (url) => this.jobState.hints?.[url],
      knownDigests: () => this.knownDigests(),
      expectedPieces: () => this.jobState.expected?.pieces,
      playback: () => this.playbackCursors[0],
      playbacks: () => this.playbackCursors,
      discarded: (start, end) => {
        this.hasher?.reset();
        this.emit('discarded', { start, end });
      },
      stored: (start, end) => this.emit('stored', { start, end }),
      options: this.options,
      get file() {
        return job.jobState.file;
      },
      setFile: async (file: RemoteFile | undefined) => {
        this.jobState = { ...this.jobState, file };
        await this.persist();
        this.emitProgress(true);
      },
      restart: async (cause: RestartCause, code: 'changed' | 'no-ranges') => {
        if (this.jobState.restarts >= this.options.maxRestarts) {
          throw new DownloadError(code, `${englishRestart(cause)}; gave up after restarting from zero ${this.jobState.restarts} times`);
        }
        await this.store.clearBytes(this.id);
        this.hasher?.reset();
        this.emit('discarded', { start: 0, end: Number.MAX_SAFE_INTEGER });
        this.receivedBytes = 0;
        this.jobState = { ...this.jobState, file: undefined, restarts: this.jobState.restarts + 1 };
        this.notice({ kind: 'restarted', cause });
      },
      notice: (notice: JobNotice) => this.notice(notice),
      received: (bytes: number) => {
        this.receivedBytes += bytes;
        this.meter.add(bytes);
        this.emitProgress(false);
      },
    };
  }

  private notice(notice: JobNotice): void {
    this.jobState = { ...this.jobState, notices: [...this.jobState.notices, notice].slice(-20) };
    void this.persist();
    this.emit('notice', notice);
  }

  private emitProgress(force: boolean): void {
    const now = this.options.clock.now();
    if (!force && now - this.lastProgressAt < this.options.progressIntervalMs) return;
    this.lastProgressAt = now;
    this.emit('progress', this.snapshot());
  }

  private async setStatus(status: JobStatus, error: JobState['error'] | null = null): Promise<void> {
    // `null` keeps the current error; `undefined` clears it.
    this.jobState = { ...this.jobState, status, error: error === null ? this.jobState.error : error };
    await this.persist();
    this.emit('status', this.snapshot());
  }

  /**
   * Saves the current state; saves run one after another so the newest one lands last. Changes
   * made while a save is under way are saved once, together, after it: a burst of notices costs
   * two writes, not one each.
   */
  private persist(): Promise<void> {
    if (this.deleted) return Promise.resolve();
    this.jobState = { ...this.jobState, updatedAt: this.options.clock.now() };
    this.unsaved = true;
    this.saving = this.saving
      .catch(() => {})
      .then(() => {
        if (!this.unsaved) return; // an earlier save in the queue already wrote this state
        this.unsaved = false;
        return this.store.saveState(this.id, this.jobState as unknown as JobStateRecord).catch((error: unknown) => {
          this.unsaved = true; // the next save in the queue tries again
          throw error;
        });
      });
    return this.saving;
  }
}

/** The URLs of `urls` not in `known`, without repeats, up to MAX_SOURCES in all. */
function newSources(known: readonly string[], urls: readonly string[]): string[] {
  const seen = new Set(known);
  const added: string[] = [];
  for (const url of urls) {
    if (seen.size >= MAX_SOURCES) break;
    if (seen.has(url)) continue;
    seen.add(url);
    added.push(url);
  }
  return added;
}

/** No source delivers: every usable one failed its last attempts and waits to try again. */
export function isRetrying(reports: readonly MirrorReport[]): boolean {
  const live = reports.filter((r) => r.dropped === undefined);
  return live.length > 0 && live.every((r) => (r.failures ?? 0) > 0);
}

/** While no source delivers, how often each has failed in a row ('' while one delivers): the attempts the pages count. */
function retryState(reports: readonly MirrorReport[]): string {
  return isRetrying(reports) ? reports.map((r) => (r.dropped === undefined ? r.failures : '-')).join(',') : '';
}
