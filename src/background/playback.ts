import { normalizeRanges, type ByteRange, type DownloadStore, type Playback } from '../engine';
import { PLAYER_PORT, type JobView, type PlayerPageMessage, type PlayerPortMessage } from '../messages';
import type { UiPort } from './browser-api';
import { storedRunAt } from './stream-range';

/** What the hub needs of the job manager. */
export interface PlaybackJobs {
  get(id: string): JobView | undefined;
  setPlayback(id: string, playback: Playback | undefined): void;
  holdBytes(id: string): () => void;
  bytesFreed(id: string): boolean;
}

export interface PlaybackHubDeps {
  jobs: () => Promise<PlaybackJobs>;
  store: () => Promise<Pick<DownloadStore, 'storedRanges'>>;
  /** How often stored ranges are re-read while someone plays or waits. */
  pollMs?: number;
  /** Playback priority is dropped this long after the last sign of a player. */
  idleMs?: number;
}

/** Seconds of media fetched first ahead of the playback position. */
const AHEAD_SECONDS = 10;
const DEFAULT_AHEAD = 2 * 1024 * 1024;
const MIN_AHEAD = 512 * 1024;
const MAX_AHEAD = 32 * 1024 * 1024;

/** One job being played: its player ports, the stored ranges last read, and byte waiters. */
interface Played {
  ports: Set<UiPort>;
  stored: ByteRange[];
  waiters: Set<{ pos: number; resolve: (stored: boolean) => void }>;
  timer?: ReturnType<typeof setInterval>;
  idle?: ReturnType<typeof setTimeout>;
  release?: () => void;
  durationSeconds?: number;
  lastSent?: string;
}

/**
 * The background side of playback, for both routes: tells a job where its player is (the
 * engine then fetches the bytes just ahead first), keeps the stored bytes while a player is
 * attached, tells player pages what is stored as it grows, and lets the stream route wait for
 * a byte still in flight. The engine has no "stored" event: the ranges are re-read from the
 * store a few times a second, only while someone plays or waits.
 */
export class PlaybackHub {
  private readonly played = new Map<string, Played>();
  private readonly pollMs: number;
  private readonly idleMs: number;

  constructor(private readonly deps: PlaybackHubDeps) {
    this.pollMs = deps.pollMs ?? 100;
    this.idleMs = deps.idleMs ?? 30_000;
  }

  /** A page connected: player ports only. */
  connect(port: UiPort): void {
    if (port.name !== PLAYER_PORT) return;
    let jobId: string | undefined;
    port.onMessage?.addListener((raw) => {
      const message = raw as PlayerPageMessage | null;
      if (message?.type === 'attach' && typeof message.id === 'string' && jobId === undefined) {
        jobId = message.id;
        void this.attach(jobId, port);
      } else if (message?.type === 'position' && jobId !== undefined) {
        const played = this.entry(jobId);
        if (isCount(message.durationSeconds) && message.durationSeconds > 0) played.durationSeconds = message.durationSeconds;
        if (isCount(message.position)) void this.need(jobId, message.position);
      }
    });
    port.onDisconnect.addListener(() => {
      if (jobId !== undefined) this.detach(jobId, port);
    });
  }

  /** The job changed (from the manager's view updates): its players hear of it. */
  jobChanged(view: JobView): void {
    if (this.played.get(view.id)?.ports.size) void this.publish(view.id);
  }

  /** The job was removed. */
  jobRemoved(id: string): void {
    if (this.played.get(id)?.ports.size) void this.publish(id);
  }

  /**
   * A player needs the bytes from `position` on (undefined: nothing more). Sets the job's
   * playback window: AHEAD_SECONDS of media at the file's mean bitrate when the duration is
   * known.
   */
  async need(jobId: string, position: number | undefined): Promise<void> {
    const played = this.entry(jobId);
    this.touch(jobId, played);
    const jobs = await this.deps.jobs();
    const size = jobs.get(jobId)?.size;
    jobs.setPlayback(jobId, position === undefined ? undefined : { position, aheadBytes: aheadBytes(size, played.durationSeconds) });
  }

  /** The stored ranges, read now. */
  async storedRanges(jobId: string): Promise<ByteRange[]> {
    const stored = normalizeRanges(await (await this.deps.store()).storedRanges(jobId));
    const played = this.played.get(jobId);
    if (played) played.stored = stored;
    return stored;
  }

  /** Resolves true once byte `pos` is stored, false after `timeoutMs`. */
  async waitForByte(jobId: string, pos: number, timeoutMs: number): Promise<boolean> {
    const played = this.entry(jobId);
    if (storedRunAt(await this.storedRanges(jobId), pos)) return true;
    return new Promise<boolean>((resolve) => {
      const waiter = {
        pos,
        resolve: (stored: boolean) => {
          clearTimeout(timer);
          played.waiters.delete(waiter);
          resolve(stored);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      played.waiters.add(waiter);
      this.startPolling(jobId, played);
    });
  }

  private async attach(jobId: string, port: UiPort): Promise<void> {
    const played = this.entry(jobId);
    played.ports.add(port);
    const jobs = await this.deps.jobs();
    played.release ??= jobs.holdBytes(jobId);
    this.touch(jobId, played);
    this.startPolling(jobId, played);
    played.lastSent = undefined;
    await this.storedRanges(jobId).catch(() => {});
    await this.publish(jobId);
  }

  private detach(jobId: string, port: UiPort): void {
    const played = this.played.get(jobId);
    if (!played) return;
    played.ports.delete(port);
    if (played.ports.size > 0) return;
    played.release?.();
    played.release = undefined;
    this.touch(jobId, played);
  }

  private entry(jobId: string): Played {
    let played = this.played.get(jobId);
    if (!played) this.played.set(jobId, (played = { ports: new Set(), stored: [], waiters: new Set() }));
    return played;
  }

  /** A sign of a player: playback priority stays until `idleMs` without one and no port. */
  private touch(jobId: string, played: Played): void {
    clearTimeout(played.idle);
    played.idle = setTimeout(() => {
      played.idle = undefined;
      if (played.ports.size > 0) return this.touch(jobId, played);
      void this.deps.jobs().then((jobs) => jobs.setPlayback(jobId, undefined));
      this.forgetIfUnused(jobId, played);
    }, this.idleMs);
  }

  private startPolling(jobId: string, played: Played): void {
    played.timer ??= setInterval(() => void this.poll(jobId, played), this.pollMs);
  }

  private async poll(jobId: string, played: Played): Promise<void> {
    if (played.ports.size === 0 && played.waiters.size === 0) {
      clearInterval(played.timer);
      played.timer = undefined;
      this.forgetIfUnused(jobId, played);
      return;
    }
    const stored = await this.storedRanges(jobId).catch(() => played.stored);
    for (const waiter of [...played.waiters]) if (storedRunAt(stored, waiter.pos)) waiter.resolve(true);
    if (played.ports.size > 0) await this.publish(jobId);
  }

  /** Forgets a job nobody plays or waits for, once its playback priority was dropped. */
  private forgetIfUnused(jobId: string, played: Played): void {
    if (played.ports.size === 0 && played.waiters.size === 0 && !played.timer && !played.idle) this.played.delete(jobId);
  }

  /** Posts the job's state to its players when it changed since the last post. */
  private async publish(jobId: string): Promise<void> {
    const played = this.played.get(jobId);
    if (!played || played.ports.size === 0) return;
    const jobs = await this.deps.jobs();
    const message: PlayerPortMessage = {
      type: 'player-state',
      job: jobs.get(jobId),
      stored: played.stored,
      bytesFreed: jobs.get(jobId) === undefined || jobs.bytesFreed(jobId),
    };
    // updatedAt changes on every view: not a reason to post again.
    const key = JSON.stringify({ ...message, job: message.job && { ...message.job, updatedAt: 0 } });
    if (key === played.lastSent) return;
    played.lastSent = key;
    for (const port of played.ports) {
      try {
        port.postMessage(message);
      } catch {
        this.detach(jobId, port); // disconnected meanwhile
      }
    }
  }
}

/** Bytes fetched first ahead of the position: AHEAD_SECONDS at the mean bitrate, bounded. */
export function aheadBytes(size: number | undefined, durationSeconds: number | undefined): number {
  if (size === undefined || durationSeconds === undefined || durationSeconds <= 0) return DEFAULT_AHEAD;
  return Math.round(Math.min(MAX_AHEAD, Math.max(MIN_AHEAD, (size / durationSeconds) * AHEAD_SECONDS)));
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
