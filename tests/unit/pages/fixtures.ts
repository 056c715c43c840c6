import type { JobView } from '../../../src/messages';

/** A job view with sensible defaults; tests override what they look at. */
export function jobView(overrides: Partial<JobView> = {}): JobView {
  return {
    id: 'job-1',
    url: 'https://example.com/files/big.iso',
    filename: 'big.iso',
    size: 100_000_000,
    received: 25_000_000,
    rate: 5_000_000,
    etaSeconds: 15,
    state: 'running',
    pausedByUser: false,
    notices: [],
    mirrors: [],
    createdAt: 1_000,
    updatedAt: 2_000,
    ...overrides,
  };
}
