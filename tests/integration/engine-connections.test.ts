/**
 * The engine with its connection-count policy against servers that reward connections differently
 * (issue 12's scenarios a–c, 20 ms latency, slow start on): the exact file every time, more
 * connections only where they pay, and no storm at a server that refuses.
 */
import { describe, expect, it } from 'vitest';
import { contentSha256 } from '../support/content';
import { TokenBucket } from '../support/token-bucket';
import { MiB, useTestBed } from '../support/test-bed';

const MB = 1_000_000;
const bed = useTestBed();

describe('connections that adapt', () => {
  it('(a) opens more connections to a server that caps each one at 1 MB/s', async () => {
    const size = 24 * MiB;
    const m = await bed.mirror({ size, seed: 120, rate: 16 * MB, connectionRate: 1 * MB, latencyMs: 20, slowStart: true });
    const run = await bed.download(m.url, { maxConnectionsPerServer: 16 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(120, size));
    console.log(`(a) most connections open ${m.stats.peakConnections}; ${JSON.stringify(run.result.mirrors[0]?.connectionsWhy)}`);
    // Two connections would take 12 s; the first step that pays (to four) is there on any machine.
    expect(m.stats.peakConnections).toBeGreaterThanOrEqual(4);
    expect(m.stats.peakConnections).toBeLessThanOrEqual(16);
  });

  it('(b) stays at a few connections when the server caps only the total', async () => {
    const size = 24 * MiB;
    const m = await bed.mirror({ size, seed: 121, rate: 8 * MB, latencyMs: 20, slowStart: true });
    const run = await bed.download(m.url, { maxConnectionsPerServer: 16 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(121, size));
    expect(m.stats.peakConnections).toBeLessThanOrEqual(4);
  });

  it('(c) remembers a server that refuses a third connection, without a storm of attempts', async () => {
    const size = 24 * MiB;
    const m = await bed.mirror({ size, seed: 122, rate: 8 * MB, latencyMs: 20, slowStart: true, connectionLimit: { max: 2 } });
    const run = await bed.download(m.url, { maxConnectionsPerServer: 16 });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(122, size));
    const refused = m.stats.requests.filter((r) => r.status === 503).length;
    console.log(`(c) ${refused} × 503; ${JSON.stringify(run.result.mirrors[0]?.connectionsWhy)}`);
    expect(refused).toBeLessThanOrEqual(3);
    expect(run.result.mirrors[0]?.phase).toBe('active');
  });

  it("does not grow at fast mirrors that share the user's line: their gains are each other's losses", async () => {
    const size = 32 * MiB;
    const line = new TokenBucket(16 * MB);
    const mirrors = await bed.mirrors([1, 2, 3, 4].map(() => ({ size, seed: 124, link: line, latencyMs: 20, slowStart: true })));
    const [first, ...others] = mirrors.map((m) => m.url);
    const run = await bed.download(first!, { maxConnectionsPerServer: 16 }, undefined, others);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(124, size));
    const peaks = mirrors.map((m) => m.stats.peakConnections);
    console.log(
      `shared line: most open ${peaks.join('/')}; ${run.result.mirrors.map((m) => JSON.stringify(m.connectionsWhy)).join(' | ')}`,
    );
    // Two each already fill the line; 16 each would be 64 connections for nothing. The first may grow while
    // it is alone (the others are still being probed), then gives them back.
    expect(peaks.slice(1).every((peak) => peak <= 5)).toBe(true);
    expect(peaks.reduce((a, b) => a + b)).toBeLessThanOrEqual(32);
  });

  it('sends the next request on a connection while its last block is still being stored, on the same connection', async () => {
    const size = 8 * MiB;
    const m = await bed.mirror({ size, seed: 125, rate: 64 * MB, latencyMs: 5 });
    const storedAt = new Map<number, number>();
    const run = await bed.download(m.url, { connectionsPerServer: 1, maxConnectionsPerServer: 1, maxBlockBytes: MiB }, (_job, store) => {
      const write = store.writeBlock.bind(store);
      store.writeBlock = async (jobId, offset, data) => {
        const end = offset + data.length;
        await new Promise((resolve) => setTimeout(resolve, 100));
        await write(jobId, offset, data);
        storedAt.set(end, Date.now());
      };
    });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(125, size));
    const requests = m.stats.requests.filter((r) => r.status === 206);
    expect(requests.length).toBeGreaterThan(2);
    for (const [i, request] of requests.slice(0, -1).entries()) {
      const end = Number(/-(\d+)$/.exec(request.range!)![1]) + 1;
      expect(requests[i + 1]!.startedAt).toBeLessThan(storedAt.get(end)!);
    }
    expect(m.stats.peakConnections).toBe(1);
  });

  it('asks for the rest of a block cut by a reset at once, while what arrived of it is still being stored', async () => {
    const size = 4 * MiB;
    const m = await bed.mirror({ size, seed: 126, rate: 64 * MB, latencyMs: 5, faults: { resetAfterBytes: 600_000, faultRequests: 1 } });
    const storedAt = new Map<number, number>();
    const run = await bed.download(m.url, { connectionsPerServer: 1, maxConnectionsPerServer: 1 }, (_job, store) => {
      const write = store.writeBlock.bind(store);
      store.writeBlock = async (jobId, offset, data) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await write(jobId, offset, data);
        storedAt.set(offset + data.length, Date.now());
      };
    });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(126, size));
    const [cut, next] = m.stats.requests;
    expect(cut!.aborted).toBe(true);
    // The next request starts where the cut one's bytes end: before those bytes were stored.
    const resumedAt = Number(/^bytes=(\d+)-/.exec(next!.range!)![1]);
    expect(storedAt.get(resumedAt)).toBeDefined();
    expect(next!.startedAt).toBeLessThan(storedAt.get(resumedAt)!);
  });

  it('rebuilds in numbers when the only body on its way breaks: its replacement would start in slow start', async () => {
    const size = 12 * MiB;
    const m = await bed.mirror({ size, seed: 127, rate: 8 * MB, latencyMs: 50, slowStart: true });
    let droppedAt: number | undefined;
    let watch: ReturnType<typeof setInterval> | undefined;
    const run = await bed.download(m.url, { connectionsPerServer: 1, maxConnectionsPerServer: 16 }, () => {
      // Once a third of the file is in, cut the connections while exactly one body is on its way (none ended in the
      // last 50 ms: the client may still be reading what a finished answer sent).
      watch = setInterval(() => {
        const now = Date.now();
        const open = m.stats.requests.filter((r) => r.endedAt === undefined);
        const justEnded = m.stats.requests.some((r) => r.endedAt !== undefined && now - r.endedAt < 50);
        if (droppedAt !== undefined || m.stats.bytesSent < size / 3 || justEnded) return;
        if (open.length !== 1 || open[0]!.bytesSent === 0) return;
        droppedAt = now;
        m.dropConnections();
      }, 2);
    });
    clearInterval(watch);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(127, size));
    expect(droppedAt).toBeDefined();
    // At 8 MB/s and 50 ms, a new connection's first round trip carries a 27th of the rate: more than one is opened
    // at once (one alone, as before the cut, would take five round trips to carry it again).
    const after = m.stats.requests.filter((r) => r.startedAt >= droppedAt! && r.startedAt < droppedAt! + 100);
    expect(after.length).toBeGreaterThanOrEqual(4);
  });

  it('takes a server that resets every connection at once for a reset, not for one that refuses connections', async () => {
    const size = 12 * MiB;
    const m = await bed.mirror({ size, seed: 123, rate: 8 * MB, latencyMs: 50, slowStart: true });
    const kinds = new Set<string>();
    let resets: ReturnType<typeof setInterval> | undefined;
    const run = await bed.download(m.url, { maxConnectionsPerServer: 16 }, (job) => {
      resets = setInterval(() => m.dropConnections(), 300);
      job.on('progress', (s) => s.mirrors?.forEach((mirror) => kinds.add(mirror.connectionsWhy.kind)));
    });
    clearInterval(resets);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(123, size));
    // Each reset cut requests waiting for their headers too: none of them was the server refusing a connection.
    expect(kinds).not.toContain('server-allows');
  });
});
