import { describe, expect, it, vi } from 'vitest';
import { mirrorOptions, SCENARIOS, SEED, type Scenario } from '../../../bench/scenarios';
import { DEFAULT_OPTIONS, type JobSnapshot } from '../../../src/engine';
import { contentSha256 } from '../../support/content';
import type { MirrorStats } from '../../support/mirror-server';
import { seededRandom, seedRandomEachTest, sent, simDownload, simServers } from './sim-download';

/**
 * The engine's loop over `npm run bench`'s scenarios (bench/scenarios.ts), on the simulated network in
 * virtual time: the same mirrors' model, the CLI's options, each run the same every time and in well under
 * a second. Each efficiency must stay within MAX_GAP of the real-socket bench's, so that the simulation
 * stays as hard as the loopback network; the decisions each scenario is about are asserted alongside.
 */

/**
 * The engine's efficiency in the real-socket bench (`npm run bench`, 2026-11-24, bench/results/latest.json):
 * optimum ÷ the median of the CLI's own `--stats` seconds, from the job's start to its end. The bench's wall
 * time adds the process's start and exit (70–100 ms), which the simulation does not run. 6: 6a's time ÷ 6's.
 */
const REAL_SOCKET_EFFICIENCY: Record<string, number> = {
  '1': 1.002,
  '2': 1.003,
  '3': 0.981,
  '4': 0.98,
  '5': 0.939,
  '6a': 0.961,
  '6': 0.975,
  '7': 1.005,
  a: 0.875,
  b: 0.996,
  c: 0.996,
  d: 0.988,
  e: 0.869,
};
const MAX_GAP = 0.03;

interface SimRun {
  seconds: number;
  exact: boolean;
  /** Body bytes sent by all mirrors ÷ the file's size. */
  overFetch: number;
  result: JobSnapshot;
  servers: MirrorStats[];
}

/** The CLI's options (src/cli/get.ts): the engine's defaults where simDownload's are the integration tests'. */
const { stallTimeoutMs, retryBaseMs, retryMaxMs, progressIntervalMs } = DEFAULT_OPTIONS;
const CLI_OPTIONS = { stallTimeoutMs, retryBaseMs, retryMaxMs, progressIntervalMs };

/** The right file's SHA-256 by size: the scenarios have two sizes. */
const expectedSha256 = new Map<number, Promise<string>>();

async function simulate(scenario: Scenario): Promise<SimRun> {
  const size = scenario.size;
  if (!expectedSha256.has(size)) expectedSha256.set(size, contentSha256(SEED, size));
  const { clock, network, servers } = simServers(scenario.mirrors.map((spec) => mirrorOptions(spec, size)));
  const [primary, ...mirrors] = servers.map((server) => server.url);
  let stop: (() => void) | undefined;
  // Once the job has started, as the bench acts on its mirrors once the client has.
  const start = () => (stop = scenario.during?.(servers, size, (ms, action) => clock.every(ms, action)));
  const run = await simDownload(network, primary!, mirrors, CLI_OPTIONS, start);
  stop?.();
  const exact = run.result.status === 'complete' && (await run.sha256()) === (await expectedSha256.get(size)!);
  return {
    seconds: run.seconds,
    exact,
    overFetch: sent(servers) / size,
    result: run.result,
    servers: servers.map((server) => server.stats),
  };
}

/** Each body's share of what the mirrors sent. */
const shares = (run: SimRun) => {
  const total = run.servers.reduce((sum, server) => sum + server.bytesSent, 0);
  return run.servers.map((server) => server.bytesSent / total);
};
const refused = (server: MirrorStats) => server.requests.filter((request) => request.status === 503).length;

/** What each scenario is about, beyond its efficiency. */
const DECISIONS: Record<string, (run: SimRun) => void> = {
  // Dynamic parallel access: each mirror serves in proportion to its rate (1:2:4:8).
  '1': (run) => shares(run).forEach((share, i) => expect(share).toBeCloseTo([1, 2, 4, 8][i]! / 15, 1)),
  '2': (run) => shares(run).forEach((share) => expect(share).toBeCloseTo(0.25, 1)),
  // The stalled mirror's blocks go to the others: it ends with about half of a quarter.
  '3': (run) => expect(shares(run)[2]).toBeLessThan(0.15),
  // The far mirror gets more connections, to fill its 300 ms round trip.
  '5': (run) => expect(run.servers[0]!.peakConnections).toBeGreaterThan(run.servers[1]!.peakConnections),
  // Each reset costs a resume with Range, not a restart: almost nothing is fetched twice.
  '6': (run) => {
    expect(run.overFetch).toBeLessThan(1.01);
    expect(run.servers[0]!.requests.length).toBeGreaterThan(40);
  },
  // The mirror with other bytes is dropped after its first block, and nothing of it is kept.
  '7': (run) => {
    expect(run.result.mirrors[1]!.dropped?.kind).toBe('other-bytes');
    expect(run.servers[1]!.bytesSent).toBeLessThan(1024 * 1024);
  },
  // Connections that pay: 16 where each is capped, no more than 4 where they only share.
  a: (run) => expect(run.servers[0]!.peakConnections).toBe(16),
  b: (run) => expect(run.servers[0]!.peakConnections).toBeLessThanOrEqual(4),
  // Two allowed: a 503 is heard once and the count stays at two.
  c: (run) => {
    expect(run.result.mirrors[0]!.connectionsWhy).toMatchObject({ kind: 'server-allows', count: 2 });
    expect(refused(run.servers[0]!)).toBeLessThanOrEqual(2);
  },
  d: (run) => shares(run).forEach((share, i) => expect(share).toBeCloseTo([1, 2, 4, 8][i]! / 15, 1)),
  // 256 KiB per 150 ms round trip: at least 5 connections to fill 8 MB/s.
  e: (run) => expect(run.servers[0]!.peakConnections).toBeGreaterThanOrEqual(5),
};

seedRandomEachTest();

describe('the loop in virtual time, over the bench scenarios', () => {
  const seconds: Record<string, number> = {};
  for (const scenario of SCENARIOS.filter((s) => REAL_SOCKET_EFFICIENCY[s.id] !== undefined)) {
    it(`${scenario.id}: ${scenario.title}: exact, within ${MAX_GAP} of the real-socket efficiency`, async () => {
      const run = await simulate(scenario);
      expect(run.exact).toBe(true);
      seconds[scenario.id] = run.seconds;
      const baseline = SCENARIOS.find((s) => s.id === scenario.baseline);
      if (baseline) seconds[baseline.id] ??= (await simulate(baseline)).seconds;
      const optimum = scenario.optimum?.(scenario.size) ?? seconds[baseline!.id]!;
      const efficiency = optimum / run.seconds;
      expect(Math.abs(efficiency - REAL_SOCKET_EFFICIENCY[scenario.id]!), `efficiency ${efficiency.toFixed(3)}`).toBeLessThanOrEqual(
        MAX_GAP,
      );
      DECISIONS[scenario.id]?.(run);
    });
  }

  it('runs the same way every time', async () => {
    const resets = SCENARIOS.find((s) => s.id === '6')!;
    const first = await simulate(resets);
    vi.spyOn(Math, 'random').mockImplementation(seededRandom(1));
    const again = await simulate(resets);
    expect(again.seconds).toBe(first.seconds);
    expect(again.servers.map((s) => s.requests.map((r) => r.range))).toEqual(first.servers.map((s) => s.requests.map((r) => r.range)));
  });
});
