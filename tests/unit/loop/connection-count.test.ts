/**
 * The connection-count policy in a closed loop with transfers (issue 12's scenarios a–c at 20 ms with slow
 * start), on the simulated network in virtual time: it should find what each server rewards, and never storm
 * one that refuses. tests/integration/engine-connections.test.ts runs the engine over real sockets.
 */
import { describe, expect, it } from 'vitest';
import { ConnectionCount } from '../../../src/engine/scheduler/connections/connection-count';
import { runPolicy } from '../../support/policy-client';
import type { SimServerOptions } from '../../support/sim-network';
import { seedRandomEachTest, simServers } from './sim-download';

const MB = 1_000_000;
const size = 256 * 1024 * 1024;
seedRandomEachTest();

async function run(options: Omit<SimServerOptions, 'size'>, durationMs: number) {
  const { clock, network, servers } = simServers([{ size, latencyMs: 20, slowStart: true, ...options }]);
  const policy = new ConnectionCount();
  const result = await clock.run(runPolicy(policy, network.fetch, clock, servers[0]!.url, size, durationMs), durationMs + 1000);
  const steps = result.samples.filter(([, l], i) => l !== result.samples[i - 1]?.[1]).map(([t, l]) => [t, l] as const);
  return { policy, result, stats: servers[0]!.stats, steps };
}

describe('the connection count against the simulated test bed', () => {
  it('(a) grows to 16 when the server caps each connection at 1 MB/s', async () => {
    const { policy, result, stats, steps } = await run({ rate: 16 * MB, connectionRate: 1 * MB }, 5_000);
    // 16 within about a second (the real-socket test could assert only the first step, from 2 to 4 or more:
    // a loaded machine serves less than 16 MB/s, where more connections rightly stop paying).
    expect(stats.peakConnections).toBe(16);
    expect(policy.reason).toMatchObject({ kind: 'at-max', count: 16 });
    expect(steps.at(-1)).toEqual([expect.any(Number), 16]);
    expect(steps.at(-1)![0]).toBeLessThanOrEqual(1000);
    expect(result.bytes / 5).toBeGreaterThan(14 * MB);
    expect(result.refusals).toBe(0);
  });

  it('(b) stays at a few connections when the server caps the total at 8 MB/s', async () => {
    const { policy, result, stats, steps } = await run({ rate: 8 * MB }, 4_000);
    // One step up to 4 does not pay, and it comes back down to 2, serving the server's 8 MB/s all the while.
    expect(stats.peakConnections).toBeLessThanOrEqual(4);
    expect(policy.limit(4_000)).toBeLessThanOrEqual(2);
    expect(policy.reason).toMatchObject({ kind: 'one-more-short', count: 2 });
    expect(steps.every(([, limit]) => limit <= 4)).toBe(true);
    expect(result.bytes / 4).toBeGreaterThan(7.5 * MB);
    expect(result.refusals).toBe(0);
  });

  it('(c) backs off at the first 503 past two connections and does not try again for long', async () => {
    const { policy, result, stats } = await run({ rate: 8 * MB, connectionLimit: { max: 2 } }, 5_000);
    const refused = stats.requests.filter((r) => r.status === 503).length;
    // The one step past two (2 → 4) is refused, and heard at once; no other try for the rest of the run.
    expect(refused).toBeLessThanOrEqual(2);
    expect(result.refusals).toBe(refused);
    expect(policy.serverLimit).toBe(2);
    expect(policy.reason).toMatchObject({ kind: 'server-allows', count: 2 });
    expect(result.samples.filter(([t]) => t >= 1000).every(([, limit]) => limit === 2)).toBe(true);
    expect(result.bytes / 5).toBeGreaterThan(7.5 * MB);
    const triesPastTwo = result.samples.filter(([, limit], i) => limit > 2 && (result.samples[i - 1]?.[1] ?? 0) <= 2);
    expect(triesPastTwo.length).toBeLessThanOrEqual(1);
  });
});
