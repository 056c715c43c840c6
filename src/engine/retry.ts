import type { Clock } from './clock';

/** Exponential backoff with full jitter: a random delay in [base/2, base·2^attempt/…], capped. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** attempt);
  // Half fixed, half random: never hammer immediately, and spread clients apart.
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Resolves after `ms` on `clock`, or rejects with the signal's reason when it aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const cancel = clock.after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
