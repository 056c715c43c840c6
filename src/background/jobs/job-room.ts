import type { JobEntry } from '../saving/job-saving';
import { noRoomMessage, ROOM_MARGIN_BYTES, roomToFinish, saveCopyFor, shortOfRoom, type Room, type SaveCopy } from './disk-room';
import type { JobMeta } from './job-meta';
import { freeBytes, SpaceWatch, type EstimateStorage } from './storage-space';

export interface JobRoomDeps {
  estimate: EstimateStorage;
  /** The least the platform's save costs of the room told (disk-room.ts). */
  platformCopy: SaveCopy;
  /** How often running jobs check free storage. */
  spaceCheckMs: number;
  /** The jobs running now. */
  running(): JobEntry[];
  updateMeta(entry: JobEntry, change: Partial<JobMeta>): Promise<void>;
}

/**
 * The job manager's side of room on the disk (disk-room.ts): a job is held before it starts when
 * the disk cannot hold what it still needs, and every running job when the disk fills under them;
 * each held job says how much it needs and how much is free.
 */
export class JobRoom {
  /** While jobs run: all paused when storage is nearly full (the store would fail next). */
  private readonly space: SpaceWatch;

  constructor(private readonly deps: JobRoomDeps) {
    this.space = new SpaceWatch(deps.estimate, deps.spaceCheckMs, {
      any: () => deps.running().length > 0,
      holdAll: async (problem) => {
        for (const entry of deps.running()) {
          await this.holdForRoom(entry, problem);
          entry.job.pause();
        }
      },
    });
  }

  /** The free bytes the store's quota tells (the disk's in Chrome, the store's limit in Firefox). */
  free(): Promise<number | undefined> {
    return freeBytes(this.deps.estimate);
  }

  /** The disk's free bytes, where the browser tells them; undefined where it does not (Firefox). */
  async diskFree(): Promise<number | undefined> {
    return this.deps.platformCopy === 'none' ? undefined : this.free();
  }

  /** Whether `entry` may run: held (saying why) when the disk lacks room for it, else no longer held and watched. */
  async mayStart(entry: JobEntry): Promise<boolean> {
    const free = await this.free();
    const size = sizeOf(entry);
    const copy = size === undefined ? 'whole' : saveCopyFor(size, stored(entry), free, this.deps.platformCopy);
    // Where two copies do not fit, Chrome's streamed save keeps the disk near one (job-saving.ts).
    entry.streamForRoom = copy === 'streamed';
    const room = shortOfRoom(size === undefined ? undefined : roomToFinish(size, stored(entry), copy), free);
    if (room) {
      await this.hold(entry, noRoomMessage(room), room);
      return false;
    }
    if (entry.meta.heldFor) await this.deps.updateMeta(entry, { heldFor: undefined, heldRoom: undefined });
    this.space.watch();
    return true;
  }

  /** Stitch itself keeps the job back; shown as paused with the reason, and the disk's room when that is why. */
  async hold(entry: JobEntry, reason: string, room?: Room): Promise<void> {
    await this.deps.updateMeta(entry, { heldFor: reason, heldRoom: room });
  }

  /** Holds a job the disk ran out under, saying how much it still needs and how much is free. */
  async holdForRoom(entry: JobEntry, reason: string): Promise<void> {
    // Where the room told is only the store's limit (Firefox), it says nothing of a full disk: no numbers then.
    if (this.deps.platformCopy === 'none') return this.hold(entry, reason);
    const size = sizeOf(entry);
    const copy = entry.streamForRoom ? 'streamed' : 'whole';
    const [still, free] = [size === undefined ? undefined : roomToFinish(size, stored(entry), copy), await this.free()];
    // What it still needs with the margin, as a shortOfRoom says it: the disk is full, whatever the sum says.
    const room = still === undefined || free === undefined ? undefined : { needed: still + ROOM_MARGIN_BYTES, free };
    await this.hold(entry, reason, room);
  }
}

/** The job's size, when known: before its own first answer, its take-over's probe's. */
function sizeOf(entry: JobEntry): number | undefined {
  return entry.job.snapshot().size ?? entry.meta.probed?.size;
}

/** The bytes of the job in the store. */
function stored(entry: JobEntry): number {
  return Math.max(entry.storedBytes, entry.job.snapshot().received);
}
