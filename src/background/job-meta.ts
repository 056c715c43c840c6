import type { BrowserApi } from './browser-api';

/**
 * What the background remembers about a job beyond the engine's state (which the engine owns
 * in the store): how it was started, whether the user paused it, and how saving went. Kept in
 * storage.local under one key per job, so it survives the worker and the browser restarting.
 */
export interface JobMeta {
  id: string;
  /** The page the download came from. */
  referrer?: string;
  /** The user's name for the file (add-url); otherwise the server's. */
  filename?: string;
  /** Ask where to save when complete. */
  saveAs: boolean;
  /** Paused by the user: never resumed automatically. */
  pausedByUser: boolean;
  save?: SaveRecord;
  /** Why Stitch holds the job back itself (not enough storage), in plain words. */
  heldFor?: string;
  createdAt: number;
}

export interface SaveRecord {
  phase: 'saving' | 'saved' | 'failed';
  /** The browser's downloads id of the save. */
  downloadId?: number;
  error?: string;
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
    filename: typeof r.filename === 'string' ? r.filename : undefined,
    saveAs: r.saveAs === true,
    pausedByUser: r.pausedByUser === true,
    save:
      save && typeof save === 'object' && phases.includes(save.phase as string)
        ? {
            phase: save.phase as SaveRecord['phase'],
            downloadId: typeof save.downloadId === 'number' ? save.downloadId : undefined,
            error: typeof save.error === 'string' ? save.error : undefined,
          }
        : undefined,
    heldFor: typeof r.heldFor === 'string' ? r.heldFor : undefined,
    createdAt: typeof r.createdAt === 'number' ? r.createdAt : 0,
  };
}
