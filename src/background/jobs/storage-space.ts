import { formatBytes } from '../../engine';

/**
 * navigator.storage.estimate, injectable for tests. `tracksDisk`: its quota less usage is the
 * disk's free space (Chrome, with unlimitedStorage, to the byte); otherwise it is only the store's
 * own limit (Firefox: half the disk's size, whatever is free), and the disk's room is not known.
 */
export type EstimateStorage = (() => Promise<{ quota?: number; usage?: number }>) & { tracksDisk?: boolean };

/** Below this much free quota a running job is paused before the store starts failing. */
export const RESERVE_BYTES = 64 * 1024 * 1024;

/**
 * The browser's estimate, once Stitch's storage is asked to be persistent: Firefox gives an origin
 * that is not persisted a tenth of the disk, and a persisted one half (measured on a 400 MB disk,
 * issue 48: 40 MB, then 200 MB; granted to an extension without asking). Chrome's quota is the
 * free disk either way (unlimitedStorage).
 */
export function browserEstimate(tracksDisk: boolean): EstimateStorage {
  const persisted = navigator.storage.persist?.().catch(() => false);
  const estimate = async () => {
    await persisted;
    return navigator.storage.estimate();
  };
  return Object.assign(estimate, { tracksDisk });
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

/**
 * How often running jobs check the free storage: at 40 MB/s a 200 MB disk fills in 5 s, which a
 * 10 s check missed (issue 48); the store's own full-disk error pauses a job in any case.
 */
export const SPACE_CHECK_MS = 2_000;

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
