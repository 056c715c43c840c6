import { afterEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter } from '../../src/engine/rate-limiter';
import { FakeClock } from '../support/fake-clock';

/** ms until `bytes` have passed `limiter` in takes of 50, on fake time. */
async function msToPass(limiter: RateLimiter, bytes: number): Promise<number> {
  const start = Date.now();
  for (let passed = 0; passed < bytes; passed += 50) {
    const taken = limiter.take(50);
    await vi.runAllTimersAsync();
    await taken;
  }
  return Date.now() - start;
}

describe('RateLimiter under a shared one (a download’s own limit under the limit for all)', () => {
  afterEach(() => void vi.useRealTimers());

  it('lets bytes pass only as fast as the stricter of the two allows', async () => {
    vi.useFakeTimers();
    // Its own limit is the stricter: 1,000 bytes at 100 B/s take about 10 s.
    expect(await msToPass(new RateLimiter(100, new RateLimiter(1000)), 1000)).toBeGreaterThanOrEqual(9_000);
    // The shared one is: about 10 s too, whatever its own says.
    expect(await msToPass(new RateLimiter(1000, new RateLimiter(100)), 1000)).toBeGreaterThanOrEqual(9_000);
    // Without its own limit, only the shared one counts: about 1 s.
    const shared = await msToPass(new RateLimiter(null, new RateLimiter(1000)), 1000);
    expect(shared).toBeGreaterThanOrEqual(900);
    expect(shared).toBeLessThan(1_500);
  });
});

describe('RateLimiter.holding', () => {
  const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('says a reader waits on the limit (its own or the shared one) only while it does', async () => {
    const clock = new FakeClock();
    const shared = new RateLimiter(1_000, undefined, clock);
    const own = new RateLimiter(null, shared, clock);
    expect(own.holding).toBe(false);
    // 1,000 bytes at 1,000 B/s, no burst saved up yet: a second's wait on the shared limit.
    const taken = own.take(1_000);
    await settled();
    expect(own.holding).toBe(true);
    clock.advance(999);
    await settled();
    expect(own.holding).toBe(true);
    clock.advance(1);
    await taken;
    expect(own.holding).toBe(false);
    // No limit at all: nothing waits.
    const free = new RateLimiter(null, undefined, clock);
    const passing = free.take(1_000_000);
    await passing;
    expect(free.holding).toBe(false);
  });
});
