import type { ByteRange } from './ranges';

/** A job's persisted description: plain JSON, owned and validated by the engine. */
export type JobStateRecord = { readonly [key: string]: unknown };

/**
 * Where a download's bytes and state live. The engine depends only on this interface; the
 * extension uses IndexedDB, the CLI a sparse file. Every method may be called concurrently for
 * different offsets of one job; a write that resolved must survive the process dying.
 */
export interface DownloadStore {
  /** Preferred size of one block record: the engine buffers incoming bytes up to this. */
  readonly blockSize: number;
  /** How many writeBlock calls the engine may keep in flight for one job. */
  readonly writeConcurrency: number;

  /**
   * Stores `data` at `offset`, replacing any stored bytes at those positions (the newest write
   * wins). Rejects with a QuotaExceededError-named error when full. To replace stored bytes with
   * different ones, discardRange them first: a crash in the middle of an overwrite may otherwise
   * leave a mix of old and new bytes claimed as stored. The store may move `data`'s buffer to
   * another thread (detaching it), so the caller reads nothing from it after the call; a buffer
   * still attached once the promise settled is the caller's again, to reuse for other bytes, and
   * so is one the store resolves with (a view of the moved buffer, handed back).
   */
  writeBlock(jobId: string, offset: number, data: Uint8Array): Promise<Uint8Array | void>;
  /** The byte ranges stored for the job, sorted and merged. */
  storedRanges(jobId: string): Promise<ByteRange[]>;
  /**
   * Yields the bytes of [start, end) in order; every byte of it must be stored. With `scratch`,
   * the store may read into it and yield views of it, each valid only until the next is asked
   * for (for callers that consume each chunk at once, like hashing: no garbage per chunk).
   */
  read(jobId: string, start: number, end: number, scratch?: Uint8Array): AsyncIterable<Uint8Array>;

  saveState(jobId: string, state: JobStateRecord): Promise<void>;
  loadState(jobId: string): Promise<JobStateRecord | undefined>;
  /** Ids of every job with saved state. */
  listJobs(): Promise<string[]>;

  /**
   * Forgets the stored bytes of [start, end) (a piece that failed its hash, or bytes a lying
   * mirror sent), keeping every stored byte outside it. Later writes may store new bytes there.
   * Once it resolved, no crash can bring the forgotten bytes back.
   */
  discardRange(jobId: string, start: number, end: number): Promise<void>;
  /** Forgets every stored byte of the job but keeps its state (a restart from zero). */
  clearBytes(jobId: string): Promise<void>;
  /** Forgets the job entirely: bytes and state. */
  deleteJob(jobId: string): Promise<void>;
}

/** True for the errors a store throws when the disk or quota is full. */
export function isQuotaError(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  const code = (error as { code?: unknown } | null)?.code;
  return name === 'QuotaExceededError' || code === 'ENOSPC' || code === 'EDQUOT';
}
