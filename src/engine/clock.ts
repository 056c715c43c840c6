/**
 * The engine's only source of time and timers: injected (EngineDependencies.clock) so that tests and a
 * simulated network can run the engine on a clock of their own. This file alone may read the platform's
 * time or set its timers (eslint.config.js enforces it for src/engine/).
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` once, `ms` from now; the function returned cancels it (a no-op once it ran). */
  after(ms: number, callback: () => void): () => void;
}

/** The platform's clock: what every caller that passes none gets. */
export const realClock: Clock = {
  now: () => Date.now(),
  after(ms, callback) {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};
