/**
 * The scheduler's backstop against a policy that sends and cuts requests in turn (policies/cut-budget.ts):
 * the streaming policy is wrapped to cut every request it sees, as two rules that disagree would, and the
 * download must still finish exact, with a bounded number of requests, on the simulated network in virtual time.
 * Without the budget it never finishes: requests are sent and cut at one virtual instant, without end.
 */
import { describe, expect, it, vi } from 'vitest';
import { MAX_CUTS_PER_MIRROR } from '../../../src/engine/scheduler/policies/cut-budget';
import { contentSha256 } from '../../support/content';
import { MiB, seedRandomEachTest, simDownload, simServers } from './sim-download';

vi.mock('../../../src/engine/scheduler/policies/streaming-priority', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/engine/scheduler/policies/streaming-priority')>();
  return {
    ...original,
    streamingDecisions: ((context) => {
      const plan = original.streamingDecisions(context);
      // The faulty rule: every block request on the wire is cut, the moment it is seen.
      for (const request of context.requests) if (request.kind === 'block') plan.decisions.push({ kind: 'cut', request });
      return plan;
    }) satisfies typeof original.streamingDecisions,
  };
});

seedRandomEachTest();

describe('a policy that cuts every request it sees', () => {
  it('makes a played download slower, not endless: at most the budget of cuts per second', async () => {
    const size = 4 * MiB;
    const bitrate = 500_000;
    const { network, servers } = simServers([{ size, seed: 83, rate: 2 * MiB, latencyMs: 20 }]);
    const run = await simDownload(
      network,
      servers[0]!.url,
      [],
      {},
      (job) => job.setPlayback([{ position: 0, aheadBytes: 10 * bitrate, bytesPerSecond: bitrate }]),
      60_000,
    );
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(83, size));
    const requests = servers[0]!.stats.requests;
    const cut = requests.filter((r) => r.aborted).length;
    expect(cut).toBeGreaterThan(0);
    expect(cut).toBeLessThanOrEqual(MAX_CUTS_PER_MIRROR * Math.ceil(run.seconds));
  });
});
