/**
 * A minimal download client driven by the connection-count policy, over real HTTP: it keeps as many
 * kept-alive connections to one server as `policy.limit(now)` allows, each fetching successive 1 MiB
 * ranges, tells the policy the total rate every tick, and reports refusals (503/429, or a connection
 * closed before the headers). It exercises the policy against the test bed before the scheduler uses it.
 */
import { Agent, request } from 'node:http';
import type { ConnectionCount } from '../../src/engine/scheduler/connections/connection-count';

const RANGE_BYTES = 1024 * 1024;
const TICK_MS = 50;

export interface PolicyRun {
  bytes: number;
  /** [ms since start, limit, connections transferring] every tick. */
  samples: [number, number, number][];
  refusals: number;
}

interface Connection {
  agent: Agent;
  /** Has had a 206: the server serves it. */
  working: boolean;
  closed: boolean;
}

export async function runPolicy(policy: ConnectionCount, url: string, size: number, durationMs: number): Promise<PolicyRun> {
  const result: PolicyRun = { bytes: 0, samples: [], refusals: 0 };
  const connections: Connection[] = [];
  const started = performance.now();
  const now = () => performance.now() - started;
  let next = 0;
  /** Time to the response headers, the round trip the policy waits on. */
  let rttMs: number | undefined;

  const close = (c: Connection) => {
    c.closed = true;
    c.agent.destroy();
    connections.splice(connections.indexOf(c), 1);
  };
  const refused = (c: Connection, status: number | undefined, retryAfter: string | undefined) => {
    result.refusals++;
    close(c);
    const working = connections.filter((other) => other.working).length;
    policy.refused(now(), { status, retryAfterMs: retryAfter === undefined ? undefined : Number(retryAfter) * 1000, connections: working });
  };
  const fetchNext = (c: Connection) => {
    if (c.closed) return;
    const start = next;
    next = (next + RANGE_BYTES) % size;
    const sentAt = now();
    const req = request(url, { agent: c.agent, headers: { Range: `bytes=${start}-${Math.min(size, start + RANGE_BYTES) - 1}` } }, (res) => {
      rttMs = Math.min(rttMs ?? Infinity, now() - sentAt);
      if (res.statusCode !== 206) {
        res.resume();
        refused(c, res.statusCode, res.headers['retry-after']);
        return;
      }
      c.working = true;
      res.on('data', (chunk: Buffer) => (result.bytes += chunk.length));
      res.on('end', () => fetchNext(c));
      res.on('error', () => {});
    });
    req.on('error', () => {
      if (!c.closed && !c.working) refused(c, undefined, undefined);
    });
    req.end();
  };

  let lastBytes = 0;
  let lastAt = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const t = now();
      const transferring = connections.filter((c) => c.working).length;
      policy.observe(t, { totalRate: ((result.bytes - lastBytes) / (t - lastAt || 1)) * 1000, connections: transferring, rttMs });
      [lastBytes, lastAt] = [result.bytes, t];
      const limit = policy.limit(t);
      result.samples.push([t, limit, transferring]);
      while (connections.length > limit) close(connections.at(-1)!);
      while (connections.length < limit) {
        const c: Connection = { agent: new Agent({ keepAlive: true, maxSockets: 1 }), working: false, closed: false };
        connections.push(c);
        fetchNext(c);
      }
      if (t >= durationMs) {
        clearInterval(timer);
        for (const c of [...connections]) close(c);
        resolve();
      }
    }, TICK_MS);
  });
  return result;
}
