import { formatBytes } from '../../engine';

/** navigator.storage.estimate, injectable for tests. */
export type EstimateStorage = () => Promise<{ quota?: number; usage?: number }>;

/** Below this much free quota a running job is paused before the store starts failing. */
export const RESERVE_BYTES = 64 * 1024 * 1024;

export function browserEstimate(): EstimateStorage {
  return () => navigator.storage.estimate();
}

/** Free quota in bytes, or undefined when the browser cannot tell. */
export async function freeBytes(estimate: EstimateStorage): Promise<number | undefined> {
  try {
    const { quota, usage } = await estimate();
    return quota === undefined ? undefined : Math.max(0, quota - (usage ?? 0));
  } catch {
    return undefined;
  }
}

/** Why running jobs must pause now, or undefined. */
export function runningProblem(free: number | undefined): string | undefined {
  if (free === undefined || free >= RESERVE_BYTES) return undefined;
  return `storage almost full (${formatBytes(free)} free); paused, keeping every byte already stored`;
}

/** The running jobs, as the space watch sees them. */
export interface RunningJobs {
  any(): boolean;
  /** Holds every running job, saying why. */
  holdAll(problem: string): Promise<void>;
}

/** While jobs run, checks the free storage every `everyMs` and holds them all when it is nearly full. */
export class SpaceWatch {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly estimate: EstimateStorage,
    private readonly everyMs: number,
    private readonly jobs: RunningJobs,
  ) {}

  watch(): void {
    this.timer ??= setInterval(() => void this.check(), this.everyMs);
  }

  private async check(): Promise<void> {
    if (!this.jobs.any()) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const problem = runningProblem(await freeBytes(this.estimate));
    if (problem) await this.jobs.holdAll(problem);
  }
}
