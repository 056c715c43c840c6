import type { BytesChange, PlaybackJobs } from '../../../src/background/playback/playback';
import { normalizeRanges, removeRange, type ByteRange, type Playback } from '../../../src/engine';
import type { JobView } from '../../../src/messages';

/**
 * One job (id 'j') behind the real playback hub and stream route: the test stores or discards its
 * bytes as it goes, as the engine announces them (the store, then the job's event), and reads
 * what the hub told the engine. Reads return `file`'s bytes in two pieces, as records would split them.
 */
export function fakePlaybackJob(view: JobView, stored: ByteRange[] = [], file = new Uint8Array(0)) {
  let current: JobView | undefined = view;
  let ranges = stored;
  let reads = 0;
  const calls: string[] = [];
  const playbacks: (readonly Playback[])[] = [];
  const watchers = new Set<(change: BytesChange) => void>();
  const jobs: PlaybackJobs = {
    get: (id) => (id === 'j' ? current : undefined),
    setPlayback: (_id, cursors) => void playbacks.push(cursors),
    holdBytes: (id) => {
      calls.push(`hold ${id}`);
      return () => void calls.push(`release ${id}`);
    },
    bytesFreed: () => false,
    watchBytes: (_id, listener) => {
      watchers.add(listener);
      return () => void watchers.delete(listener);
    },
  };
  const store = {
    storedRanges: async () => {
      reads++;
      return ranges;
    },
    async *read(_id: string, start: number, end: number) {
      const middle = Math.floor((start + end) / 2);
      yield file.slice(start, middle);
      yield file.slice(middle, end);
    },
  };
  return {
    jobs,
    store,
    calls,
    playbacks,
    watchers,
    reads: () => reads,
    change: (kind: BytesChange['kind'], start: number, end: number) => {
      ranges = kind === 'stored' ? normalizeRanges([...ranges, { start, end }]) : removeRange(ranges, { start, end });
      for (const watcher of watchers) watcher({ kind, range: { start, end } });
    },
    setView: (next: JobView | undefined) => (current = next),
  };
}
