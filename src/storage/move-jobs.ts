import type { DownloadStore } from '../engine';

/**
 * Moves every job from one store to another: its stored bytes, then its state, then deletes it
 * from the first. Run again after an interruption, it copies the same bytes again: nothing is lost.
 * Reads one block at a time (bounded memory, whatever the files' sizes).
 */
export async function moveJobs(from: DownloadStore, to: DownloadStore): Promise<number> {
  const jobs = await from.listJobs();
  for (const job of jobs) {
    const state = await from.loadState(job);
    for (const { start, end } of await from.storedRanges(job)) {
      let pos = start;
      for await (const bytes of from.read(job, start, end)) {
        const length = bytes.length; // the store may take the buffer
        await to.writeBlock(job, pos, bytes);
        pos += length;
      }
    }
    if (state) await to.saveState(job, state);
    await from.deleteJob(job);
  }
  return jobs.length;
}
