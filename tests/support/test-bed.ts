import { afterEach } from 'vitest';
import { runEngine, type EngineRun } from './engine-run';
import { startMirror, type Mirror, type MirrorOptions } from './mirror-server';

export const MiB = 1024 * 1024;

/** Mirrors and engine runs for integration tests, closed after each test. */
export function useTestBed() {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  const bed = {
    onCleanup: (close: () => Promise<void>): void => {
      closers.push(close);
    },
    mirror: async (options: MirrorOptions): Promise<Mirror> => {
      const m = await startMirror(options);
      closers.push(() => m.close());
      return m;
    },
    mirrors: (options: MirrorOptions[]): Promise<Mirror[]> => Promise.all(options.map((o) => bed.mirror(o))),
    download: async (...args: Parameters<typeof runEngine>): Promise<EngineRun> => {
      const run = await runEngine(...args);
      closers.push(() => run.cleanup());
      return run;
    },
  };
  return bed;
}
