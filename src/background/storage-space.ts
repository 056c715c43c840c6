import { formatBytes } from '../engine';

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

/** Why a job needing `needed` more bytes must not start, in plain words; undefined if it may. */
export function startProblem(free: number | undefined, needed: number | undefined): string | undefined {
  if (free === undefined || needed === undefined || needed <= free) return undefined;
  return `not enough storage: ${formatBytes(needed)} still to download but only ${formatBytes(free)} free; free some space and resume`;
}

/** Why running jobs must pause now, or undefined. */
export function runningProblem(free: number | undefined): string | undefined {
  if (free === undefined || free >= RESERVE_BYTES) return undefined;
  return `storage almost full (${formatBytes(free)} free); paused, keeping every byte already stored`;
}
