import { describe, expect, it } from 'vitest';
import { englishDrop } from '../../../src/engine';
import { hrwOrder } from '../../../src/engine/sources/hrw';
import { contentSha256 } from '../../support/content';
import type { MirrorRequest } from '../../support/mirror-server';
import type { SimServer } from '../../support/sim-network';
import { MiB, seedRandomEachTest, sent, simDownload, simServers } from './sim-download';

/**
 * The loop's timing decisions over several mirrors (tests/integration/engine-mirrors.test.ts keeps the
 * cases about bytes and headers over real sockets), on the simulated network in virtual time: stalls,
 * dead and refusing mirrors, the end game, deadlines, Retry-After, HRW order, a far primary.
 */
seedRandomEachTest();

const urls = (servers: SimServer[]) => servers.slice(1).map((s) => s.url);
const rangeOf = (r: MirrorRequest) => {
  const match = /bytes=(\d+)-(\d+)/.exec(r.range ?? '');
  return match ? { start: Number(match[1]), end: Number(match[2]) + 1 } : undefined;
};

/** The most requests that asked for one byte. */
function mostCopies(requests: MirrorRequest[]): number {
  const edges = requests
    .map(rangeOf)
    .filter((r) => r !== undefined)
    .flatMap((r) => [
      [r.start, 1],
      [r.end, -1],
    ])
    .sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (open += step!));
  return most;
}

describe('several mirrors at once, in virtual time', () => {
  it('finishes on the others when a mirror stalls for good, re-requesting its blocks', async () => {
    const size = 16 * MiB;
    const { network, clock, servers } = simServers([0, 1, 2].map(() => ({ size, seed: 43, rate: 4 * MiB })));
    let stalledAt = 0;
    const run = await simDownload(network, servers[0]!.url, urls(servers), { stallTimeoutMs: 5000 }, (job) =>
      job.on('progress', (p) => {
        if (!stalledAt && p.received > size / 2) {
          stalledAt = clock.now();
          servers[2]!.setFaults({ stallAfterBytes: 0 });
          servers[2]!.dropConnections();
        }
      }),
    );
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(43, size));
    // Half the file at 12 MiB/s, the other half at 8 MiB/s: 1.67 s at best. The stalled mirror's blocks went to
    // the others well before the 5 s stall timeout (the real-socket test allowed 5 s in all).
    expect(run.seconds).toBeLessThan(2);
    const after = servers[2]!.stats.requests.filter((r) => r.startedAt >= stalledAt);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((r) => r.bytesSent === 0)).toBe(true);
    expect(run.result.mirrors[2]!.bytes).toBeLessThan(size / 4);
    expect(run.result.mirrors[0]!.bytes + run.result.mirrors[1]!.bytes).toBeGreaterThan((3 * size) / 4);
  });

  it('survives a dead mirror, backing it off, and never counts its failures against the job', async () => {
    const size = 4 * MiB;
    const { network, clock, servers } = simServers([{ size, seed: 44, rate: 8 * MiB }]);
    const deadUrl = 'http://dead.sim/file.bin';
    const attempts: number[] = [];
    const fetch: typeof network.fetch = (url, init) => {
      if (url.startsWith('http://dead.sim/')) attempts.push(clock.now());
      return network.fetch(url, init);
    };
    const run = await simDownload(network, servers[0]!.url, [deadUrl], { maxAttemptsWithoutProgress: 3, fetch });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(44, size));
    // Its probe and the first block asked with it at once, then two more attempts, each after a longer back-off.
    expect(attempts).toHaveLength(4);
    const [probe, guess, second, third] = attempts.map((t) => t - run.startedAt) as [number, number, number, number];
    expect(guess).toBe(probe);
    expect(second - guess).toBeGreaterThan(0);
    expect(third - second).toBeGreaterThan(second - guess);
    expect(run.result.mirrors[1]).toMatchObject({ phase: 'dropped' });
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/gave up after 3 attempts/);
  });

  it('duplicates the last slow blocks on a fast mirror (end game) with bounded over-fetch', async () => {
    const size = 8 * MiB;
    const { network, servers } = simServers([
      { size, seed: 45, rate: 16 * MiB },
      { size, seed: 45, rate: 256 * 1024 },
    ]);
    const run = await simDownload(network, servers[0]!.url, urls(servers));
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(45, size));
    // The slow mirror must not hold the download back by its last block: one of its blocks alone takes 2 s.
    // The real-socket test allowed 2 s in all and an over-fetch of 1.2.
    expect(run.seconds).toBeLessThan(0.6);
    expect(sent(servers) / size).toBeLessThan(1.02);
    // Its blocks (past the probe) were duplicated on the fast mirror and given up once the fast copy was stored.
    const blocks = servers[1]!.stats.requests.slice(1);
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      expect(block.aborted).toBe(true);
      // The fast mirror was asked for the rest of the block, from where the slow one had got to.
      const range = rangeOf(block)!;
      const rest = servers[0]!.stats.requests
        .map(rangeOf)
        .filter((r) => r !== undefined && r.end === range.end && range.start < r.start && r.start <= range.start + block.bytesSent);
      expect(rest).toHaveLength(1);
    }
  });

  it('re-requests a block past its deadline on another mirror, with at most two copies', async () => {
    const size = 12 * MiB;
    const { network, servers } = simServers([
      { size, seed: 48, rate: 6 * MiB },
      { size, seed: 48, rate: 6 * MiB },
    ]);
    let slowed = false;
    const run = await simDownload(network, servers[0]!.url, urls(servers), {}, (job) =>
      job.on('progress', (p) => {
        if (!slowed && p.received > 3 * MiB) {
          slowed = true;
          servers[1]!.setRate(64 * 1024);
        }
      }),
    );
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(48, size));
    const slowAsked = servers[1]!.stats.requests.map(rangeOf).filter((r) => r !== undefined);
    const isHedge = (request: MirrorRequest) => {
      const f = rangeOf(request);
      return f !== undefined && slowAsked.some((r) => f.start > r.start && f.start < r.end);
    };
    const hedged = servers[0]!.stats.requests.filter(isHedge);
    expect(hedged.length).toBeGreaterThan(0);
    // The first re-request of a slowed block's rest came while blocks never asked for were left, not at the end.
    const fresh = servers[0]!.stats.requests.filter((r) => !isHedge(r));
    const firstHedge = Math.min(...hedged.map((r) => r.startedAt));
    expect(firstHedge).toBeLessThan(Math.max(...fresh.map((r) => r.startedAt)));
    // Without hedging the slow mirror's last blocks would take tens of seconds (the real-socket test allowed 6 s).
    expect(run.seconds).toBeLessThan(2.5);
    // At most two copies of any byte were asked for, across both mirrors.
    expect(mostCopies([...servers[0]!.stats.requests, ...servers[1]!.stats.requests])).toBeLessThanOrEqual(2);
    expect(sent(servers) / size).toBeLessThan(1.05);
  });

  it('backs off a mirror answering 503 with Retry-After, and uses it again when it recovers', async () => {
    const size = 12 * MiB;
    const { network, servers } = simServers([
      { size, seed: 49, rate: 3 * MiB },
      { size, seed: 49, rate: 3 * MiB, faults: { errorStatus: { status: 503, retryAfter: '1' }, faultRequests: 3 } },
    ]);
    const run = await simDownload(network, servers[0]!.url, urls(servers));
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(49, size));
    // First its probe, 503, and the first block asked with it at once, given up when the 503 came (on the
    // loopback it reaches the server first and gets a 503 too); then nothing for a second, each time.
    const [probe, guess, second, third] = servers[1]!.stats.requests;
    expect(probe).toMatchObject({ status: 503, startedAt: run.startedAt });
    expect(guess).toMatchObject({ startedAt: probe!.startedAt });
    expect(guess!.status === 503 || guess!.aborted).toBe(true);
    expect(second!.status).toBe(503);
    expect(second!.startedAt - probe!.startedAt).toBeGreaterThanOrEqual(1000);
    expect(second!.startedAt - probe!.startedAt).toBeLessThan(1100);
    expect(third!.status).toBe(206);
    expect(third!.startedAt - second!.startedAt).toBeGreaterThanOrEqual(1000);
    expect(third!.startedAt - second!.startedAt).toBeLessThan(1100);
    expect(servers[1]!.stats.bytesSent).toBeGreaterThan(MiB);
    expect(run.result.mirrors[1]!.phase).toBe('active');
  });

  it('with many mirrors, uses the first few in HRW order and widens past a dead one', async () => {
    const size = 4 * MiB;
    const { network, servers } = simServers(Array.from({ length: 8 }, () => ({ size, seed: 50, rate: 2 * MiB })));
    const order = hrwOrder(servers.slice(1), (m) => m.url, servers[0]!.url);
    // The first mirror in HRW order is dead: the next two in order must take its place.
    order[0]!.setFaults({ refuse: true });
    const run = await simDownload(network, servers[0]!.url, urls(servers), { maxMirrors: 3, maxAttemptsWithoutProgress: 2 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(50, size));
    expect(order[0]!.stats.requests.length).toBeGreaterThan(0);
    expect(order[0]!.stats.requests.every((r) => r.status === 0 && r.aborted)).toBe(true);
    const used = servers.slice(1).filter((m) => m.stats.bytesSent > 0);
    expect(new Set(used)).toEqual(new Set([order[1], order[2]]));
    for (const unused of order.slice(3)) expect(unused.stats.requests).toHaveLength(0);
  });
});

describe('a far primary and near mirrors, in virtual time', () => {
  it('starts the near mirrors before the far primary answers, checking them when it does', async () => {
    const size = 12 * MiB;
    const { network, servers } = simServers([
      { size, seed: 90, rate: 4 * MiB, latencyMs: 400 },
      { size, seed: 90, rate: 4 * MiB },
      { size, seed: 90, rate: 4 * MiB },
    ]);
    const run = await simDownload(network, servers[0]!.url, urls(servers), { stallTimeoutMs: 3000 });
    expect(run.result.error).toBeUndefined();
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(90, size));
    // Each near mirror's first block was asked for while the primary was still silent.
    const primaryAnswered = servers[0]!.stats.requests[0]!.startedAt + 400;
    for (const near of servers.slice(1)) expect(near.stats.requests[1]!.startedAt).toBeLessThan(primaryAnswered);
    expect(run.result.mirrors.map((m) => m.phase)).toEqual(['active', 'active', 'active']);
  });

  it('discards what a near mirror stored on trust when its bytes turn out to differ', async () => {
    const size = 8 * MiB;
    const { network, servers } = simServers([
      { size, seed: 91, rate: 4 * MiB, latencyMs: 400 },
      { size, seed: 92, rate: 8 * MiB },
      { size, seed: 91, rate: 4 * MiB },
    ]);
    const discarded: number[] = [];
    const run = await simDownload(network, servers[0]!.url, urls(servers), { stallTimeoutMs: 3000 }, (job) =>
      job.on('discarded', (r) => discarded.push(r.end - r.start)),
    );
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(91, size));
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/different bytes/);
    // It did work on trust before the check: that work was thrown away, not used.
    expect(servers[1]!.stats.bytesSent).toBeGreaterThan(256 * 1024);
    expect(discarded.reduce((a, b) => a + b, 0)).toBeGreaterThan(256 * 1024);
  });

  it('restarts on the primary when the mirrors that answered first serve a file of another size', async () => {
    const size = 4 * MiB;
    const { network, servers } = simServers([
      { size, seed: 93, rate: 8 * MiB, latencyMs: 300 },
      { size: size + 10, seed: 93, rate: 8 * MiB },
    ]);
    const run = await simDownload(network, servers[0]!.url, urls(servers), { stallTimeoutMs: 3000 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(93, size));
    expect(run.result.mirrors[0]).toMatchObject({ phase: 'active', bytes: size });
    expect(englishDrop(run.result.mirrors[1]!.dropped!)).toMatch(/serves a file of 4194314 bytes/);
  });
});
