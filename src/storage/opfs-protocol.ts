/**
 * Messages between OpfsFiles (the background) and the OPFS worker, which alone holds the sync
 * access handles (only a dedicated worker may). Each job's bytes are in chunk files of
 * CHUNK_BYTES (opfs-chunks.ts), or, for a job an older version began, in one file.
 */
export type OpfsRequest = { id: number; job: string } &
  /** `data`'s buffer is transferred: a view of part of it arrives as that part. */
  (
    | { op: 'write'; offset: number; data: Uint8Array }
    /** Flushes and closes the job's handles. */
    | { op: 'release' }
    | { op: 'remove' }
    /** Deletes the job's chunk files of index below `before` (nothing of a one-file job). */
    | { op: 'drop'; before: number }
  );

export type OpfsReply =
  /** A write's `data`, its buffer moved back: the writer reuses it for the next block. */
  | { id: number; ok: true; data?: Uint8Array }
  /** `name` keeps QuotaExceededError recognisable across the worker boundary. */
  | { id: number; ok: false; name: string; message: string };

/** Job ids are UUIDs (or the store's own check id); anything else is refused. */
function checkedJob(job: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(job)) throw new Error(`invalid job id ${JSON.stringify(job)}`);
  return job;
}

/** The one file of a job an older version began (before chunk files): it keeps that layout until removed. */
export function jobFileName(job: string): string {
  return `${checkedJob(job)}.bytes`;
}

/** The job's chunk file `index`: its bytes [index × CHUNK_BYTES, (index + 1) × CHUNK_BYTES). */
export function chunkFileName(job: string, index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) throw new Error(`invalid chunk index ${index}`);
  return `${checkedJob(job)}.${index}.bytes`;
}

/** The chunk index of `name` if it is one of `job`'s chunk files, else undefined. */
export function chunkIndexOf(job: string, name: string): number | undefined {
  const prefix = `${checkedJob(job)}.`;
  if (!name.startsWith(prefix) || !name.endsWith('.bytes')) return undefined;
  const index = name.slice(prefix.length, -'.bytes'.length);
  return /^(0|[1-9][0-9]{0,14})$/.test(index) ? Number(index) : undefined;
}
