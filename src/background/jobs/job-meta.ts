import type { BrowserApi } from '../browser-api';
import type { JobCredentials } from './create-job';
import type { Room } from './disk-room';

/**
 * What the background remembers about a job beyond the engine's state (which the engine owns
 * in the store): how it was started, whether the user paused it, and how saving went. Kept in
 * storage.local under one key per job, so it survives the worker and the browser restarting.
 */
export interface JobMeta {
  id: string;
  /** The page the download came from. */
  referrer?: string;
  /** Whether the job's requests to the URL's origin carry the browser's cookies. */
  credentials: JobCredentials;
  /** Mirror origins a rule allowed cookies for when the job was created. */
  cookieOrigins: string[];
  /** The user's name for the file (add-url); otherwise the server's. */
  filename?: string;
  /** What the take-over's probe learned (the server's name, the size), shown until the job's own first answer. */
  probed?: { filename?: string; size?: number };
  /** This download's own speed limit in bytes/s, under the settings' limit for all. */
  speedLimit?: number;
  /** Ask where to save when complete. */
  saveAs: boolean;
  /** Taken over from a browser download (the popup offers to hand it back). */
  takenOver?: boolean;
  /** Paused by the user: never resumed automatically. */
  pausedByUser: boolean;
  save?: SaveRecord;
  /**
   * Cancelled or removed by the user, undoable until `at`; `pausedByUser` and `running` are what it
   * was before (undo puts it back); `group`: cancelled by one Cancel all, undone by one Undo. Gone
   * for good once `at` has passed.
   */
  removing?: { at: number; pausedByUser: boolean; running?: true; group?: string };
  /** Its place in the order the user gave the downloads (queue-order.ts); absent: `createdAt`. */
  order?: number;
  /** Why Stitch holds the job back itself (not enough storage), in plain words. */
  heldFor?: string;
  /** The disk's room when it was held for want of it: what a person reads (disk-room.ts). */
  heldRoom?: Room;
  createdAt: number;
}

export interface SaveRecord {
  phase: 'saving' | 'saved' | 'failed';
  /** The browser's downloads id of the save. */
  downloadId?: number;
  error?: string;
  /** The name the browser saved it under (it may have added " (1)"); shown instead of ours once saved. */
  filename?: string;
  /** Chrome: saved while downloading, from the worker's save route (the stream dies with the worker). */
  streamed?: true;
  /** A save that failed for want of room on the disk: how much it needed and how much was free. */
  room?: Room;
  /** The browser's disk was full where the store's was not (the download folder on another disk). */
  folderFull?: true;
  /** The browser failed to write the file where the disk's room is not told (Firefox): most often a full disk. */
  writeFailed?: true;
  /** The name asked first, which the system could not write: the file went under a safe one (asciiFilename). */
  renamedFrom?: string;
}

const PREFIX = 'job-meta:';

export class JobMetaStore {
  constructor(private readonly api: BrowserApi) {}

  async load(id: string): Promise<JobMeta> {
    return parseMeta(id, await this.api.storage.get(PREFIX + id));
  }

  save(meta: JobMeta): Promise<void> {
    return this.api.storage.set(PREFIX + meta.id, meta);
  }

  remove(id: string): Promise<void> {
    return this.api.storage.remove(PREFIX + id);
  }
}

/** Stored meta, tolerating anything: missing or odd fields get their defaults. */
export function parseMeta(id: string, raw: unknown): JobMeta {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const save = r.save as Partial<SaveRecord> | undefined;
  const phases = ['saving', 'saved', 'failed'];
  return {
    id,
    referrer: typeof r.referrer === 'string' ? r.referrer : undefined,
    // Jobs stored before this field was kept were started with cookies.
    credentials: r.credentials === 'omit' ? 'omit' : 'include',
    cookieOrigins: strings(r.cookieOrigins),
    filename: typeof r.filename === 'string' ? r.filename : undefined,
    probed: parseProbed(r.probed),
    speedLimit: positiveNumber(r.speedLimit),
    saveAs: r.saveAs === true,
    takenOver: r.takenOver === true ? true : undefined,
    pausedByUser: r.pausedByUser === true,
    save:
      save && typeof save === 'object' && phases.includes(save.phase as string)
        ? {
            phase: save.phase as SaveRecord['phase'],
            downloadId: typeof save.downloadId === 'number' ? save.downloadId : undefined,
            error: typeof save.error === 'string' ? save.error : undefined,
            filename: typeof save.filename === 'string' ? save.filename : undefined,
            streamed: save.streamed === true ? true : undefined,
            room: parseRoom(save.room),
            folderFull: save.folderFull === true ? true : undefined,
            writeFailed: save.writeFailed === true ? true : undefined,
            renamedFrom: typeof save.renamedFrom === 'string' ? save.renamedFrom : undefined,
          }
        : undefined,
    heldFor: typeof r.heldFor === 'string' ? r.heldFor : undefined,
    heldRoom: parseRoom(r.heldRoom),
    removing: parseRemoving(r.removing),
    order: typeof r.order === 'number' && Number.isFinite(r.order) ? r.order : undefined,
    createdAt: typeof r.createdAt === 'number' ? r.createdAt : 0,
  };
}

function parseRoom(raw: unknown): Room | undefined {
  const room = raw as Partial<Room> | null | undefined;
  const bytes = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  return room && bytes(room.needed) && bytes(room.free) ? { needed: room.needed!, free: room.free! } : undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

function parseProbed(raw: unknown): JobMeta['probed'] {
  const r = raw as { filename?: unknown; size?: unknown } | undefined;
  if (!r || typeof r !== 'object') return undefined;
  const size = typeof r.size === 'number' && Number.isSafeInteger(r.size) && r.size >= 0 ? r.size : undefined;
  return { filename: typeof r.filename === 'string' ? r.filename : undefined, size };
}

function parseRemoving(raw: unknown): JobMeta['removing'] {
  const r = raw as { at?: unknown; pausedByUser?: unknown; running?: unknown; group?: unknown } | undefined;
  if (!r || typeof r !== 'object' || typeof r.at !== 'number') return undefined;
  return {
    at: r.at,
    pausedByUser: r.pausedByUser === true,
    ...(r.running === true && { running: true as const }),
    ...(typeof r.group === 'string' && { group: r.group }),
  };
}
