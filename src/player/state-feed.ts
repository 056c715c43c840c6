import type { PlayerPortMessage } from '../messages';

/** The latest player state from the background, and waits for one that satisfies a condition. */
export class StateFeed {
  private current: PlayerPortMessage | undefined;
  private readonly waiters = new Set<{ test: (s: PlayerPortMessage) => boolean; resolve: (s: PlayerPortMessage) => void }>();

  get latest(): PlayerPortMessage | undefined {
    return this.current;
  }

  push(state: PlayerPortMessage): void {
    this.current = state;
    for (const waiter of [...this.waiters]) {
      if (!waiter.test(state)) continue;
      this.waiters.delete(waiter);
      waiter.resolve(state);
    }
  }

  /** Resolves with the first state (the current one included) for which `test` holds. */
  until(test: (state: PlayerPortMessage) => boolean, signal?: AbortSignal): Promise<PlayerPortMessage> {
    if (this.current && test(this.current)) return Promise.resolve(this.current);
    return new Promise((resolve, reject) => {
      const waiter = { test, resolve };
      this.waiters.add(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          this.waiters.delete(waiter);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }
}

/** Every byte of [0, size) is stored (the download is complete, or its bytes are kept after saving). */
export function allStored(state: PlayerPortMessage): boolean {
  const size = state.job?.size;
  const first = state.stored[0];
  return size !== undefined && !state.bytesFreed && (size === 0 || (state.stored.length === 1 && first?.start === 0 && first.end === size));
}

/** The download stopped for good (no byte will come without the user acting). */
export function hopeless(state: PlayerPortMessage): boolean {
  return !state.job || state.bytesFreed || state.job.state === 'failed' || state.job.state === 'cancelled';
}
