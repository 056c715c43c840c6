import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/engine/rate-limiter';
import { RateMeter } from '../../src/engine/rate-meter';
import { sleep } from '../../src/engine/retry';
import { Watchdog } from '../../src/engine/watchdog';
import { FakeClock } from '../support/fake-clock';

/** Lets every promise callback waiting run (the fake clock runs timers, not the promise chains they resolve). */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the engine’s timers on an injected clock', () => {
  it('sleep resolves when the clock reaches its time, and an abort cancels its timer', async () => {
    const clock = new FakeClock();
    let woke = false;
    void sleep(clock, 1_000).then(() => (woke = true));
    clock.advance(999);
    await settled();
    expect(woke).toBe(false);
    clock.advance(1);
    await settled();
    expect(woke).toBe(true);

    const controller = new AbortController();
    const aborted = sleep(clock, 1_000, controller.signal);
    controller.abort(new Error('paused'));
    await expect(aborted).rejects.toThrow('paused');
    expect(clock.pending).toBe(0);
  });

  it('a watchdog aborts a connection silent for its timeout; each kick restarts the wait', () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const watchdog = new Watchdog(clock, controller, 20_000, () => new Error('silent'));
    clock.advance(15_000);
    watchdog.kick();
    clock.advance(15_000);
    expect(controller.signal.aborted).toBe(false);
    clock.advance(5_000);
    expect(controller.signal.aborted).toBe(true);
    expect((controller.signal.reason as Error).message).toBe('silent');

    const stopped = new Watchdog(clock, new AbortController(), 20_000, () => new Error('silent'));
    stopped.stop();
    expect(clock.pending).toBe(0);
  });

  it('a speed limit makes a reader wait exactly the time its bytes take at the rate', async () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(1_000, undefined, clock);
    // No burst saved up yet: 1,000 bytes at 1,000 B/s wait one second.
    let passed = false;
    void limiter.take(1_000).then(() => (passed = true));
    await settled();
    clock.advance(999);
    await settled();
    expect(passed).toBe(false);
    clock.advance(1);
    await settled();
    expect(passed).toBe(true);
  });

  it('a rate meter decays to nothing once the bytes stop', () => {
    const clock = new FakeClock();
    const meter = new RateMeter(clock, 5_000);
    for (let i = 0; i < 10; i++) {
      meter.add(100_000);
      clock.advance(100);
    }
    // 900 kB after the first sample, over the second since it.
    expect(meter.rate()).toBe(900_000);
    clock.advance(9_000);
    expect(meter.rate()).toBeLessThan(100_000);
  });
});
