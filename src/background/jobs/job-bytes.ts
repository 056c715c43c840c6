import { timelineOf, type Playback, type StreamTimeline } from '../../engine';
import type { JobView } from '../../messages';
import type { BytesChange, PlaybackJobs } from '../playback/playback';
import type { JobEntry } from '../saving/job-saving';

export interface JobBytesDeps {
  /** The job manager's jobs (read only here). */
  entries: ReadonlyMap<string, JobEntry>;
  views(): JobView[];
  get(id: string): JobView | undefined;
  /** Deletes a saved job's stored copy. */
  freeBytes(entry: JobEntry): Promise<void>;
}

/**
 * The jobs' stored bytes as the players and the save route read them while the job manager owns
 * the jobs: where a job's players are, every range as it is stored, and the stored copy kept
 * after saving for as long as a player holds it.
 */
export class JobBytes implements PlaybackJobs {
  constructor(private readonly deps: JobBytesDeps) {}

  get(id: string): JobView | undefined {
    return this.deps.get(id);
  }

  /** A stream job's parts as its player plays them from the stored file; undefined for any other job. */
  streamTimeline(id: string): StreamTimeline | undefined {
    const layout = this.deps.entries.get(id)?.job.state.stream;
    return layout && timelineOf(layout);
  }

  /** The newest job downloading `url` (a file, or a stream's playlist) whose bytes are (or will be) stored, for the player. */
  findPlayable(url: string): JobView | undefined {
    return this.deps.views().find((view) => {
      const entry = this.deps.entries.get(view.id)!;
      const downloads = view.url === url || entry.job.state.stream?.playlist === url;
      return downloads && !entry.bytesFreed && view.state !== 'cancelled' && view.state !== 'failed';
    });
  }

  /** Where the job's players are, the most recently moved first (the engine fetches the bytes just ahead first). */
  setPlayback(id: string, playbacks: readonly Playback[]): void {
    this.deps.entries.get(id)?.job.setPlayback(playbacks);
  }

  /** Calls `listener` for every range the job stores or discards from now on; returns the unsubscribe. */
  watchBytes(id: string, listener: (change: BytesChange) => void): () => void {
    const job = this.deps.entries.get(id)?.job;
    if (!job) return () => {};
    const stored = job.on('stored', (range) => listener({ kind: 'stored', range }));
    const discarded = job.on('discarded', (range) => listener({ kind: 'discarded', range }));
    return () => {
      stored();
      discarded();
    };
  }

  /** True once the job was saved and its stored copy deleted. */
  bytesFreed(id: string): boolean {
    return this.deps.entries.get(id)?.bytesFreed ?? true;
  }

  /**
   * Keeps the job's stored bytes after it is saved, for a player, until the returned release is
   * called (then they are freed if the job was saved meanwhile).
   */
  holdBytes(id: string): () => void {
    const entry = this.deps.entries.get(id);
    if (!entry) return () => {};
    entry.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.holds--;
      if (entry.holds === 0 && entry.meta.save?.phase === 'saved' && !entry.bytesFreed) void this.deps.freeBytes(entry).catch(() => {});
    };
  }
}
