/**
 * How far a streamed save may send a job's bytes. The browser finishes a download (and gives it
 * its final name) only once it has Content-Length bytes, so the last HOLD_BACK bytes wait until
 * the job is complete, which means verified (size, digests, piece hashes): a job that fails
 * verification never becomes a file under its final name.
 */
export const HOLD_BACK = 1024 * 1024;

export function sendableEnd(size: number, verified: boolean, holdBack = HOLD_BACK): number {
  return verified ? size : Math.max(0, size - Math.max(1, holdBack));
}
