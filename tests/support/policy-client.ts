/**
 * A minimal download client driven by the connection-count policy, over an HttpFetch and a clock (the
 * simulated network in virtual time, sim-network.ts): it keeps as many connections to one server as
 * `policy.limit(now)` allows, each fetching successive 1 MiB ranges, tells the policy the total rate every
 * tick, and reports refusals (503/429, or a connection closed before the headers). It exercises the policy
 * in a closed loop with transfers, apart from the scheduler that uses it.
 */
import type { Clock, HttpFetch } from '../../src/engine';
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
  /** Ends its request in flight: the server closes the connection. */
  abort: AbortController;
  /** Has had a 206: the server serves it. */
  working: boolean;
  closed: boolean;
}

/** Runs the client for `durationMs` of `clock`'s time; with a FakeClock, under `clock.run`. */
export async function runPolicy(
  policy: ConnectionCount,
  fetch: HttpFetch,
  clock: Clock & { every(ms: number, action: () => void): () => void },
  url: string,
  size: number,
  durationMs: number,
): Promise<PolicyRun> {
  const result: PolicyRun = { bytes: 0, samples: [], refusals: 0 };
  const connections: Connection[] = [];
  const started = clock.now();
  const now = () => clock.now() - started;
  let next = 0;
  /** Time to the response headers, the round trip the policy waits on. */
  let rttMs: number | undefined;

  const close = (c: Connection) => {
    c.closed = true;
    c.abort.abort();
    connections.splice(connections.indexOf(c), 1);
  };
  const refused = (c: Connection, status: number | undefined, retryAfter: string | null) => {
    result.refusals++;
    close(c);
    const working = connections.filter((other) => other.working).length;
    policy.refused(now(), { status, retryAfterMs: retryAfter === null ? undefined : Number(retryAfter) * 1000, connections: working });
  };
  const fetchNext = async (c: Connection) => {
    while (!c.closed) {
      const start = next;
      next = (next + RANGE_BYTES) % size;
      const sentAt = now();
      try {
        const range = `bytes=${start}-${Math.min(size, start + RANGE_BYTES) - 1}`;
        const res = await fetch(url, { headers: { Range: range }, signal: c.abort.signal });
        rttMs = Math.min(rttMs ?? Infinity, now() - sentAt);
        if (res.status !== 206) {
          await res.body?.cancel();
          refused(c, res.status, res.headers.get('retry-after'));
          return;
        }
        c.working = true;
        const reader = res.body!.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) result.bytes += read.value.length;
      } catch {
        if (!c.closed && !c.working) refused(c, undefined, null);
        return;
      }
    }
  };

  let lastBytes = 0;
  let lastAt = 0;
  await new Promise<void>((resolve) => {
    const stop = clock.every(TICK_MS, () => {
      const t = now();
      const transferring = connections.filter((c) => c.working).length;
      policy.observe(t, { totalRate: ((result.bytes - lastBytes) / (t - lastAt || 1)) * 1000, connections: transferring, rttMs });
      [lastBytes, lastAt] = [result.bytes, t];
      const limit = policy.limit(t);
      result.samples.push([t, limit, transferring]);
      while (connections.length > limit) close(connections.at(-1)!);
      while (connections.length < limit) {
        const c: Connection = { abort: new AbortController(), working: false, closed: false };
        connections.push(c);
        void fetchNext(c);
      }
      if (t >= durationMs) {
        stop();
        for (const c of [...connections]) close(c);
        resolve();
      }
    });
  });
  return result;
}
