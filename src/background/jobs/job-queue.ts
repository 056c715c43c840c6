import { UNDO_MS, type JobAction, type JobViewState } from '../../messages';
import { t } from '../../words/i18n';
import type { JobEntry } from '../saving/job-saving';
import type { JobMeta } from './job-meta';
import {
  afterUndo,
  allTargets,
  moved,
  placeOf,
  queueOf,
  rankFirst,
  rankForNew,
  storedRank,
  toStart,
  type InLine,
  type QueuePlace,
} from './queue-order';

/** What the queue needs from the job manager. */
export interface QueueHost {
  readonly entries: ReadonlyMap<string, JobEntry>;
  /** The concurrent-downloads limit, as the settings say now. */
  limit(): number;
  /** How long a cancel can be undone (0: removed at once). */
  undoMs?: number;
  start(entry: JobEntry): void;
  pause(entry: JobEntry): Promise<void>;
  /** Forgets the job and its stored bytes. */
  remove(entry: JobEntry): Promise<void>;
  /** One action on one job (an action on all is that action on each). */
  act(id: string, action: JobAction): Promise<unknown>;
  updateMeta(entry: JobEntry, change: Partial<JobMeta>): Promise<void>;
  /** The job's state as the list shows it. */
  state(entry: JobEntry): JobViewState;
  /** Tells the pages the job's view changed (its place did). */
  report(entry: JobEntry): void;
  /** Jobs started or stopped: the worker's keep-alive follows. */
  activity(): void;
}

/** Unfinished and not paused by the user: it should run (or wait for a slot). */
export function wantsToRun(entry: JobEntry): boolean {
  const status = entry.job.state.status;
  return (status === 'queued' || status === 'running' || status === 'verifying' || status === 'paused') && !entry.meta.pausedByUser;
}

const FINISHED: ReadonlySet<JobViewState> = new Set(['saved', 'failed', 'cancelled']);

/**
 * The jobs waiting for a slot under the concurrent-downloads limit, in the order the user gave
 * (queue-order.ts decides it; each job's rank is kept in its meta, so the order survives the
 * worker), and the actions on that order: Start now, Move up/down, Cancel with its Undo, and the
 * actions on all jobs. The queue is not a list of its own: it is every job that waits, so a job
 * paused, cancelled or held and then let go again is back at its place.
 */
export class JobQueue {
  /** Actions on several jobs at once start nothing until they are done (then the queue's front starts). */
  private held = 0;
  private lastRank = 0;
  /** Jobs being removed: they wait no more. */
  private readonly leaving = new Set<string>();
  /** Jobs Stitch held (storage) before the worker started: tried once more, as a restart always did. */
  private readonly retryHeld = new Set<string>();
  /** Cancelled jobs waiting for their undo to expire. */
  private readonly removals = new Map<string, ReturnType<typeof setTimeout>>();
  /** The places last told to the pages. */
  private readonly told = new Map<string, string>();

  constructor(private readonly host: QueueHost) {}

  /** Its place while it waits; undefined when it does not. */
  place(entry: JobEntry): QueuePlace | undefined {
    return this.waits(entry) ? placeOf(this.line(), entry.job.id) : undefined;
  }

  /** The rank of a job the user just gave: after every other. */
  rankForNew(): number {
    this.lastRank = rankForNew(this.ranks(), this.lastRank, Date.now());
    return this.lastRank;
  }

  /** A job read from the store: an undoable cancel keeps its timer; a job held before the restart is tried again. */
  restored(entry: JobEntry): void {
    if (entry.meta.removing && !this.removals.has(entry.job.id)) this.scheduleRemoval(entry);
    if (entry.meta.heldFor && !entry.running) this.retryHeld.add(entry.job.id);
  }

  /** Starts waiting jobs from the front while slots are free, and tells the pages of every place that changed. */
  settle(): void {
    for (const id of this.leaving) if (!this.host.entries.has(id)) this.leaving.delete(id);
    if (this.held === 0) {
      const running = [...this.host.entries.values()].filter((e) => e.running !== undefined).length;
      for (const id of toStart(queueOf(this.line()), running, this.host.limit())) this.startNow(this.host.entries.get(id)!);
    }
    const queue = queueOf(this.line());
    const places = new Map(queue.map((id, i) => [id, `${i + 1}/${queue.length}`]));
    for (const [id, place] of places) {
      const entry = this.host.entries.get(id);
      if (entry && this.told.get(id) !== place) this.host.report(entry);
    }
    for (const id of this.told.keys()) if (!places.has(id)) this.told.delete(id);
    for (const [id, place] of places) this.told.set(id, place);
    this.host.activity();
  }

  /** The job is being removed: it waits no more. */
  leave(id: string): void {
    this.leaving.add(id);
  }

  /** Start now: a waiting job starts at once, past the limit, and ranks first from now on. */
  async startAhead(entry: JobEntry): Promise<void> {
    if (!this.waits(entry)) return;
    this.startNow(entry);
    const others = [...this.host.entries.values()].filter((e) => e !== entry).map((e) => storedRank(e.meta));
    await this.host.updateMeta(entry, { order: rankFirst(others, storedRank(entry.meta)) });
    this.settle();
  }

  /** Move up (it starts sooner) or down one place; refused in words when the job does not wait. */
  async move(entry: JobEntry, direction: 'up' | 'down'): Promise<void> {
    const ranks = moved(this.line(), entry.job.id, direction);
    if (!ranks) throw new Error(t('errorMoveState'));
    // Every meta changes before any is stored: no view shows two jobs at one place.
    await Promise.all([...ranks].map(([id, order]) => this.host.updateMeta(this.host.entries.get(id)!, { order })));
    this.settle();
  }

  /**
   * Stops the job but keeps it, its bytes and its place until the undo expires; then it is
   * removed. `all`: one Cancel all, which one Undo brings back whole.
   */
  async cancel(entry: JobEntry, all?: { group: string; at: number }): Promise<void> {
    if (entry.meta.removing) return;
    if (this.host.undoMs === 0) return this.host.remove(entry);
    const { pausedByUser } = entry.meta;
    const running = entry.running !== undefined;
    if (!FINISHED.has(this.host.state(entry))) await this.host.pause(entry);
    const at = all?.at ?? Date.now() + (this.host.undoMs ?? UNDO_MS);
    await this.host.updateMeta(entry, {
      removing: { at, pausedByUser, ...(running && { running: true as const }), ...(all && { group: all.group }) },
    });
    this.scheduleRemoval(entry);
  }

  /** Brings a cancelled job back as it was: running again if it ran, else waiting at its place unless the user had paused it. */
  async undo(entry: JobEntry): Promise<void> {
    const removing = entry.meta.removing;
    if (!removing) return;
    clearTimeout(this.removals.get(entry.job.id));
    this.removals.delete(entry.job.id);
    await this.host.updateMeta(entry, { removing: undefined, pausedByUser: removing.pausedByUser });
    const { start } = afterUndo([{ id: entry.job.id, running: removing.running === true }]);
    if (start.length > 0) this.startNow(entry);
    this.settle();
  }

  /**
   * An action on every job it applies to, or on those of `ids` (the rows a filter shows, or one
   * Cancel all's jobs for its Undo); returns how many. Nothing starts until all are done, so the
   * queue's front starts, not whichever job came first.
   */
  async actAll(action: JobAction, ids?: readonly string[]): Promise<number> {
    const entries = [...this.host.entries.values()];
    const targets = allTargets(
      action,
      entries.map((e) => ({ id: e.job.id, state: this.host.state(e), cancelled: e.meta.removing !== undefined })),
      ids,
    );
    const all = action === 'cancel' ? { group: crypto.randomUUID(), at: Date.now() + (this.host.undoMs ?? UNDO_MS) } : undefined;
    this.held++;
    try {
      for (const id of targets) {
        const entry = this.host.entries.get(id);
        if (!entry) continue;
        if (all) await this.cancel(entry, all);
        else await this.host.act(id, action);
      }
    } finally {
      this.held--;
      this.settle();
    }
    return targets.length;
  }

  private startNow(entry: JobEntry): void {
    this.retryHeld.delete(entry.job.id);
    if (!entry.running) this.host.start(entry);
  }

  private scheduleRemoval(entry: JobEntry): void {
    const id = entry.job.id;
    clearTimeout(this.removals.get(id));
    const delay = Math.max(0, (entry.meta.removing?.at ?? 0) - Date.now());
    this.removals.set(
      id,
      setTimeout(() => {
        this.removals.delete(id);
        if (this.host.entries.get(id) === entry && entry.meta.removing) void this.host.remove(entry).catch(() => {});
      }, delay),
    );
  }

  /** Wants a slot and has none. */
  private waits(entry: JobEntry): boolean {
    const id = entry.job.id;
    if (entry.running || entry.meta.removing || this.leaving.has(id) || !wantsToRun(entry)) return false;
    return !entry.meta.heldFor || this.retryHeld.has(id);
  }

  private line(): InLine[] {
    return [...this.host.entries.values()].map((e) => ({ id: e.job.id, rank: storedRank(e.meta), waiting: this.waits(e) }));
  }

  private *ranks(): Iterable<number> {
    for (const e of this.host.entries.values()) yield storedRank(e.meta);
  }
}
