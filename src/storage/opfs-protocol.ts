/**
 * Messages between OpfsFiles (the background) and the OPFS worker, which alone holds the sync
 * access handles (only a dedicated worker may). One file per job, its bytes at their offsets.
 */
export type OpfsRequest = { id: number; job: string } &
  /** `data`'s buffer is transferred: a view of part of it arrives as that part. */
  (
    | { op: 'write'; offset: number; data: Uint8Array }
    /** Flushes and closes the job's handle. */
    | { op: 'release' }
    | { op: 'remove' }
  );

export type OpfsReply =
  /** A write's `data`, its buffer moved back: the writer reuses it for the next block. */
  | { id: number; ok: true; data?: Uint8Array }
  /** `name` keeps QuotaExceededError recognisable across the worker boundary. */
  | { id: number; ok: false; name: string; message: string };

/** The job's file in the origin private file system. Job ids are UUIDs; anything else is refused. */
export function jobFileName(job: string): string {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(job)) throw new Error(`invalid job id ${JSON.stringify(job)}`);
  return `${job}.bytes`;
}
