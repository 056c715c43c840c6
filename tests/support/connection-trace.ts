/**
 * Rate traces for the connection-count policy: a client that keeps exactly as many connections open as
 * the policy allows, against a server modelled as the test bed (mirror-server.ts) behaves, on a fake clock.
 */
import type { ConnectionCount } from '../../src/engine/scheduler/connections/connection-count';
import { INITIAL_WINDOW_BYTES } from './congestion-window';

/** A server as the test bed models it: per-connection slow start and caps, a total cap, a connection limit. */
export interface Server {
  totalRate: number;
  connectionRate?: number;
  /** Bytes per round trip of one connection at most. */
  windowBytes?: number;
  rttMs: number;
  maxConnections?: number;
  retryAfterMs?: number;
  /** The download's size, if the client knows it: it reports the bytes left. */
  fileBytes?: number;
}

export interface Trace {
  /** [ms, limit, connections open, total rate] every tick. */
  samples: [number, number, number, number][];
  mostOpen: number;
  refusals: number;
  bytes: number;
}

/**
 * Runs a client that keeps exactly `policy.limit(now)` connections open against `server`, on a fake clock
 * in 20 ms ticks: new connections start in slow start (10 segments, doubling each round trip), the total
 * is shared under the server's cap, rates carry ±4 % of noise (deterministic per `seed`), and connections
 * past the server's limit are refused with 503. `change` may alter the server mid-run.
 */
export function run(
  policy: ConnectionCount,
  server: Server,
  untilMs: number,
  change?: (now: number, s: Server) => void,
  seed = 12345,
): Trace {
  const tickMs = 20;
  const opened: number[] = [];
  const trace: Trace = { samples: [], mostOpen: 0, refusals: 0, bytes: 0 };
  const noise = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return 1 + 0.08 * (seed / 2 ** 31 - 0.5);
  };
  for (let now = 0; now <= untilMs; now += tickMs) {
    change?.(now, server);
    const wanted = policy.limit(now);
    while (opened.length > wanted) opened.pop();
    while (opened.length < wanted) {
      if (server.maxConnections !== undefined && opened.length >= server.maxConnections) {
        trace.refusals++;
        policy.refused(now, { status: 503, retryAfterMs: server.retryAfterMs, connections: opened.length });
        break;
      }
      opened.push(now);
    }
    trace.mostOpen = Math.max(trace.mostOpen, opened.length);
    const each = opened.map((since) => {
      const window = INITIAL_WINDOW_BYTES * 2 ** Math.floor((now - since) / server.rttMs);
      const byWindow = (Math.min(window, server.windowBytes ?? Infinity) / server.rttMs) * 1000;
      return Math.min(byWindow, server.connectionRate ?? Infinity);
    });
    const sum = each.reduce((a, b) => a + b, 0);
    const total = Math.min(sum, server.totalRate) * noise();
    trace.bytes += (total * tickMs) / 1000;
    trace.samples.push([now, wanted, opened.length, total]);
    const remainingBytes = server.fileBytes === undefined ? undefined : Math.max(0, server.fileBytes - trace.bytes);
    policy.observe(now, { totalRate: total, connections: opened.length, rttMs: server.rttMs, remainingBytes });
  }
  return trace;
}
