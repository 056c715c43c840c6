import * as v from 'valibot';
import { normalizeRanges, removeRange, type ByteRange, type DownloadStore, type Playback } from '../../engine';
import { PLAYER_PAGE_MESSAGE } from '../../message-schemas';
import { PLAYER_PORT, type JobView, type PlayerPortMessage } from '../../messages';
import type { UiPort } from '../browser-api';

/** Bytes a job stored or discarded, as its engine job announces them. */
export interface BytesChange {
  kind: 'stored' | 'discarded';
  range: ByteRange;
}

/** What the hub needs of the job manager. */
export interface PlaybackJobs {
  get(id: string): JobView | undefined;
  /** Where the job's players are, the most recently moved first; empty: nobody plays. */
  setPlayback(id: string, playbacks: readonly Playback[]): void;
  holdBytes(id: string): () => void;
  bytesFreed(id: string): boolean;
  /** Calls `listener` for every range the job stores or discards from now on; returns the unsubscribe. */
  watchBytes(id: string, listener: (change: BytesChange) => void): () => void;
}

export interface PlaybackHubDeps {
  jobs: () => Promise<PlaybackJobs>;
  store: () => Promise<Pick<DownloadStore, 'storedRanges'>>;
  /** A player's position stops counting this long after its last sign (a port's lasts while it is connected). */
  idleMs?: number;
}

/** Seconds of media fetched first ahead of the playback position. */
const AHEAD_SECONDS = 10;
const DEFAULT_AHEAD = 2 * 1024 * 1024;
const MIN_AHEAD = 512 * 1024;
const MAX_AHEAD = 32 * 1024 * 1024;

/** The position a job started by Play is given before its player has read anything (expectPlayer). */
const EXPECTED_PLAYER = Symbol('expected player');

/** Who holds a position in a job: a player page's port (Firefox), a stream client (Chrome), or Play's expectation. */
type Player = UiPort | string | typeof EXPECTED_PLAYER;

/** One player's position in a job. */
interface Cursor {
  position: number;
  movedAt: number;
  expiry?: ReturnType<typeof setTimeout>;
}

/** One job being played or read: its player ports, its players' positions, its stored ranges. */
interface Played {
  ports: Set<UiPort>;
  cursors: Map<Player, Cursor>;
  /** Open stream responses reading the job (Chrome). */
  followers: number;
  /** Called at the job's next change (bytes stored or discarded, its view), then forgotten. */
  listeners: Set<() => void>;
  /** Kept current by the job's byte events while someone listens; undefined until first read. */
  stored?: ByteRange[];
  watching?: Promise<void>;
  /** Counts starts and ends of following, so a watch that ended while it started lets go. */
  watchGeneration: number;
  unwatch?: () => void;
  release?: () => void;
  durationSeconds?: number;
  lastSent?: string;
  publishQueued?: boolean;
}

/**
 * The background side of playback, for both routes: tells a job where its players are (the
 * engine then fetches the bytes just ahead first), keeps the stored bytes while a player is
 * attached, tells player pages what is stored as it changes, and wakes the stream route when a
 * byte it waits for arrives. While anyone plays, waits or streams, it follows the job's `stored`
 * and `discarded` events: the store is read once, never polled.
 */
export class PlaybackHub {
  private readonly played = new Map<string, Played>();
  private readonly idleMs: number;

  constructor(private readonly deps: PlaybackHubDeps) {
    this.idleMs = deps.idleMs ?? 30_000;
  }

  /** A page connected: player ports only. Its messages are parsed with their schema; malformed ones are ignored. */
  connect(port: UiPort): void {
    if (port.name !== PLAYER_PORT) return;
    let jobId: string | undefined;
    port.onMessage?.addListener((raw) => {
      const parsed = v.safeParse(PLAYER_PAGE_MESSAGE, raw);
      if (!parsed.success) return;
      const message = parsed.output;
      if (message.type === 'attach' && jobId === undefined) {
        jobId = message.id;
        void this.attach(jobId, port);
      } else if (message.type === 'position' && jobId !== undefined) {
        const played = this.entry(jobId);
        if (message.durationSeconds !== undefined) played.durationSeconds = message.durationSeconds;
        if (message.position !== undefined) void this.need(jobId, port, message.position);
      }
    });
    port.onDisconnect.addListener(() => {
      if (jobId !== undefined) this.detach(jobId, port);
    });
  }

  /** The job changed (from the manager's view updates): its players and waiters hear of it. */
  jobChanged(view: JobView): void {
    const played = this.played.get(view.id);
    if (!played) return;
    this.wake(played);
    this.queuePublish(view.id, played);
  }

  /** The job was removed. */
  jobRemoved(id: string): void {
    const played = this.played.get(id);
    if (!played) return;
    this.wake(played);
    this.queuePublish(id, played);
  }

  /**
   * Player `player` needs the bytes from `position` on (undefined: nothing more). The job's
   * players, the most recently moved first, each get AHEAD_SECONDS of media at the file's
   * mean bitrate when the duration is known.
   */
  async need(jobId: string, player: UiPort | string, position: number | undefined): Promise<void> {
    const played = this.entry(jobId);
    // The player's own position replaces the one Play expected.
    if (position !== undefined) this.forget(played, EXPECTED_PLAYER);
    await this.move(jobId, played, player, position);
  }

  /**
   * A job started by Play: its player will read from byte 0, so the job's first requests serve the
   * start alone instead of sharing the line with blocks far ahead, before its page has read anything
   * (a <video> or hls.js still loading). Unused, it lapses as a quiet stream client's position does.
   */
  async expectPlayer(jobId: string, durationSeconds: number | undefined): Promise<void> {
    const played = this.entry(jobId);
    if (durationSeconds !== undefined) played.durationSeconds = durationSeconds;
    await this.move(jobId, played, EXPECTED_PLAYER, 0);
  }

  private async move(jobId: string, played: Played, player: Player, position: number | undefined): Promise<void> {
    const cursor = played.cursors.get(player);
    this.forget(played, player);
    if (position !== undefined) {
      const moved = cursor?.position !== position ? Date.now() : cursor.movedAt;
      const next: Cursor = { position, movedAt: moved };
      // A port's position lasts while the port does; a stream client's until it goes quiet.
      if (typeof player !== 'object') next.expiry = setTimeout(() => void this.move(jobId, played, player, undefined), this.idleMs);
      played.cursors.set(player, next);
    }
    await this.tellJob(jobId, played);
    this.settle(jobId, played);
  }

  private forget(played: Played, player: Player): void {
    clearTimeout(played.cursors.get(player)?.expiry);
    played.cursors.delete(player);
  }

  /** A stream response reads the job until the returned release is called: its ranges are kept current meanwhile. */
  follow(jobId: string): () => void {
    const played = this.entry(jobId);
    played.followers++;
    this.settle(jobId, played);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      played.followers--;
      this.settle(jobId, played);
    };
  }

  /** The stored ranges: from the job's events while they are followed, else read now. */
  async storedRanges(jobId: string): Promise<ByteRange[]> {
    const played = this.played.get(jobId);
    if (played?.watching) await played.watching;
    if (played?.stored && played.unwatch) return played.stored;
    return normalizeRanges(await (await this.deps.store()).storedRanges(jobId));
  }

  /**
   * Resolves true at the job's next change (bytes stored or discarded, a new state), false
   * after `timeoutMs` or when `signal` aborts.
   */
  nextChange(jobId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const played = this.entry(jobId);
    return new Promise<boolean>((resolve) => {
      const done = (changed: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        played.listeners.delete(changedNow);
        this.settle(jobId, played);
        resolve(changed);
      };
      const changedNow = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      if (signal?.aborted) return done(false);
      signal?.addEventListener('abort', aborted, { once: true });
      played.listeners.add(changedNow);
      this.settle(jobId, played);
    });
  }

  private async attach(jobId: string, port: UiPort): Promise<void> {
    const played = this.entry(jobId);
    played.ports.add(port);
    const jobs = await this.deps.jobs();
    if (!played.ports.has(port)) return; // gone meanwhile
    played.release ??= jobs.holdBytes(jobId);
    this.settle(jobId, played);
    await played.watching;
    played.lastSent = undefined;
    await this.publish(jobId, played);
  }

  private detach(jobId: string, port: UiPort): void {
    const played = this.played.get(jobId);
    if (!played?.ports.delete(port)) return;
    if (played.ports.size === 0) {
      played.release?.();
      played.release = undefined;
    }
    void this.need(jobId, port, undefined);
  }

  private entry(jobId: string): Played {
    let played = this.played.get(jobId);
    if (!played)
      this.played.set(jobId, (played = { ports: new Set(), cursors: new Map(), followers: 0, listeners: new Set(), watchGeneration: 0 }));
    return played;
  }

  /** Follows the job's byte events while anyone listens; forgets a job nobody plays, waits for or reads. */
  private settle(jobId: string, played: Played): void {
    const listened = played.ports.size > 0 || played.listeners.size > 0 || played.followers > 0;
    if (listened) {
      played.watching ??= this.watch(jobId, played, ++played.watchGeneration);
      return;
    }
    played.watchGeneration++;
    played.unwatch?.();
    played.unwatch = undefined;
    played.watching = undefined;
    played.stored = undefined;
    if (played.cursors.size === 0 && this.played.get(jobId) === played) this.played.delete(jobId);
  }

  /** Subscribes to the job's byte events, then reads the stored ranges once; events meanwhile are applied after. */
  private async watch(jobId: string, played: Played, generation: number): Promise<void> {
    const early: BytesChange[] = [];
    const jobs = await this.deps.jobs();
    const unwatch = jobs.watchBytes(jobId, (change) => {
      if (played.stored === undefined) early.push(change);
      else this.apply(jobId, played, change);
    });
    if (played.watchGeneration !== generation) return unwatch(); // nobody listens any more
    played.unwatch = unwatch;
    const stored = await (
      await this.deps.store()
    )
      .storedRanges(jobId)
      .then(normalizeRanges)
      .catch(() => []);
    if (played.watchGeneration !== generation) return;
    played.stored = stored;
    for (const change of early) this.apply(jobId, played, change);
    // A waiter may have looked before the events were followed.
    this.wake(played);
    this.queuePublish(jobId, played);
  }

  private apply(jobId: string, played: Played, change: BytesChange): void {
    const stored = played.stored ?? [];
    played.stored = change.kind === 'stored' ? normalizeRanges([...stored, change.range]) : removeRange(stored, change.range);
    this.wake(played);
    this.queuePublish(jobId, played);
  }

  private wake(played: Played): void {
    for (const listener of [...played.listeners]) listener();
  }

  /** Tells the job where its players are, the most recently moved first. */
  private async tellJob(jobId: string, played: Played): Promise<void> {
    const jobs = await this.deps.jobs();
    const size = jobs.get(jobId)?.size;
    const cursors = [...played.cursors.values()].sort((a, b) => b.movedAt - a.movedAt);
    jobs.setPlayback(
      jobId,
      cursors.map((c) => playbackAt(c.position, size, played.durationSeconds)),
    );
  }

  /** One post per turn of the event loop, however many ranges were stored in it. */
  private queuePublish(jobId: string, played: Played): void {
    if (played.ports.size === 0 || played.publishQueued) return;
    played.publishQueued = true;
    setTimeout(() => {
      played.publishQueued = false;
      void this.publish(jobId, played);
    }, 0);
  }

  /** Posts the job's state to its players when it changed since the last post. */
  private async publish(jobId: string, played: Played): Promise<void> {
    if (played.ports.size === 0 || played.stored === undefined) return;
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

/**
 * A player at byte `position` of a file of `size` bytes and `durationSeconds`: the window ahead of it,
 * and the bitrate urgent requests are sized by, when known.
 */
export function playbackAt(position: number, size: number | undefined, durationSeconds: number | undefined): Playback {
  const rate = bytesPerSecond(size, durationSeconds);
  return { position, aheadBytes: aheadBytes(size, durationSeconds), ...(rate ? { bytesPerSecond: rate } : {}) };
}

/** Bytes fetched first ahead of the position: AHEAD_SECONDS at the mean bitrate, bounded. */
export function aheadBytes(size: number | undefined, durationSeconds: number | undefined): number {
  const rate = bytesPerSecond(size, durationSeconds);
  return rate === undefined ? DEFAULT_AHEAD : Math.round(Math.min(MAX_AHEAD, Math.max(MIN_AHEAD, rate * AHEAD_SECONDS)));
}

/** The media's mean bitrate in bytes/s, once its duration is known: urgent requests are sized by it. */
export function bytesPerSecond(size: number | undefined, durationSeconds: number | undefined): number | undefined {
  return size === undefined || durationSeconds === undefined || durationSeconds <= 0 ? undefined : size / durationSeconds;
}
