/**
 * The test bed's network emulation, checked over real loopback HTTP: slow start per connection (and its
 * restart after idle on a kept-alive connection), a per-connection window, the connection limit with 503,
 * and the most connections open at once.
 */
import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { INITIAL_WINDOW_BYTES } from '../support/congestion-window';
import { startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';

const open: Mirror[] = [];
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  await Promise.all(open.splice(0).map((m) => m.close()));
});

async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  open.push(m);
  return m;
}

function keepAliveAgent(maxSockets = 1): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets });
  agents.push(agent);
  return agent;
}

/** One GET through `agent`: status, Retry-After, body length, and milliseconds until its last byte. */
function get(url: string, agent: Agent, range?: string) {
  return new Promise<{ status: number; retryAfter: string | undefined; bytes: number; ms: number }>((resolve, reject) => {
    const t0 = performance.now();
    const req = request(url, { agent, headers: range ? { Range: range } : {} }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], bytes, ms: performance.now() - t0 }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('slow start', () => {
  // 14 600 + 29 200 + 58 400 + 116 800: exactly four round trips from a cold window.
  const fourRounds = 15 * INITIAL_WINDOW_BYTES;

  it('starts each connection at 10 segments, doubles per round trip, and restarts only after the RTO (RTT + 200 ms) idle', async () => {
    const m = await mirror({ size: fourRounds, slowStart: true, rttMs: 100 });
    const agent = keepAliveAgent();

    const cold = await get(m.url, agent);
    expect(cold.bytes).toBe(fourRounds);
    // The last round opens three round trips after the first.
    expect(cold.ms).toBeGreaterThanOrEqual(290);

    const warm = await get(m.url, agent);
    expect(warm.bytes).toBe(fourRounds);

    // 250 ms is past the old fixed 200 ms but within the RTO of a 100 ms round trip (300 ms): still warm.
    await idle(250);
    const stillWarm = await get(m.url, agent);
    expect(stillWarm.ms).toBeLessThan(250);

    await idle(350);
    const restarted = await get(m.url, agent);
    expect(restarted.ms).toBeGreaterThanOrEqual(290);

    // One kept-alive connection carried all four; its window was cold for the first and the last.
    expect(m.stats.connections).toBe(1);
    const windows = m.stats.requests.map((r) => r.windowBytes);
    expect(windows[0]).toBe(INITIAL_WINDOW_BYTES);
    expect(windows[1]).toBe(8 * INITIAL_WINDOW_BYTES);
    expect(windows[2]).toBeGreaterThanOrEqual(8 * INITIAL_WINDOW_BYTES);
    expect(windows[3]).toBe(INITIAL_WINDOW_BYTES);
  });

  it('gives every new connection its own cold window', async () => {
    const m = await mirror({ size: fourRounds, slowStart: true, rttMs: 100 });
    const results = await Promise.all([get(m.url, keepAliveAgent()), get(m.url, keepAliveAgent())]);
    for (const r of results) expect(r.ms).toBeGreaterThanOrEqual(290);
    expect(m.stats.requests.map((r) => r.windowBytes)).toEqual([INITIAL_WINDOW_BYTES, INITIAL_WINDOW_BYTES]);
  });
});

describe('window per connection', () => {
  it('limits each connection to windowBytes per round trip; two connections get twice as much', async () => {
    const m = await mirror({ size: 1_000_000, windowBytes: 100_000, latencyMs: 50 });
    const one = await get(m.url, keepAliveAgent());
    // Ten rounds of 100 kB: the tenth opens 450 ms after the first, which comes 50 ms after the request.
    expect(one.ms).toBeGreaterThanOrEqual(490);
    expect(m.stats.requests[0]!.windowBytes).toBe(100_000);

    const t0 = performance.now();
    const halves = await Promise.all([get(m.url, keepAliveAgent(), 'bytes=0-499999'), get(m.url, keepAliveAgent(), 'bytes=500000-')]);
    const two = performance.now() - t0;
    expect(halves.map((h) => h.bytes)).toEqual([500_000, 500_000]);
    expect(two).toBeGreaterThanOrEqual(240);
    expect(two).toBeLessThan(one.ms * 0.8);
  });

  it('refuses a window without a round trip, in plain words', async () => {
    await expect(startMirror({ size: 10, windowBytes: 1000 })).rejects.toThrow(/round trip/);
  });
});

describe('connection limit', () => {
  it('serves the first N connections, answers 503 with Retry-After on the others and closes them', async () => {
    const m = await mirror({ size: 100_000, connectionLimit: { max: 2, retryAfter: '3' } });
    const agent = keepAliveAgent(4);
    const first = await Promise.all([1, 2, 3, 4].map(() => get(m.url, agent)));
    expect(first.map((r) => r.status).sort()).toEqual([200, 200, 503, 503]);
    expect(first.filter((r) => r.status === 503).map((r) => r.retryAfter)).toEqual(['3', '3']);
    expect(first.filter((r) => r.status === 200).map((r) => r.bytes)).toEqual([100_000, 100_000]);
    expect(m.stats.peakConnections).toBe(4);

    // The two admitted connections are kept alive and keep being served; the refused ones were closed.
    const again = await Promise.all([get(m.url, agent), get(m.url, agent)]);
    expect(again.map((r) => r.status)).toEqual([200, 200]);
    expect(m.stats.connections).toBe(4);
  });

  it('admits a new connection once an admitted one has closed', async () => {
    const m = await mirror({ size: 1000, connectionLimit: { max: 1 } });
    const held = keepAliveAgent();
    expect((await get(m.url, held)).status).toBe(200);
    const refused = await get(m.url, keepAliveAgent());
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBeUndefined();
    held.destroy();
    await expect.poll(() => m.stats.requests.length).toBe(2);
    await expect.poll(async () => (await get(m.url, keepAliveAgent())).status).toBe(200);
  });
});

describe('most connections open at once', () => {
  it('counts connections open together (kept-alive idle ones too), not connections over time', async () => {
    const m = await mirror({ size: 200_000, rate: 4_000_000 });
    const reused = keepAliveAgent();
    for (let i = 0; i < 4; i++) await get(m.url, reused);
    expect(m.stats.peakConnections).toBe(1);
    await Promise.all([get(m.url, keepAliveAgent()), get(m.url, keepAliveAgent()), get(m.url, keepAliveAgent())]);
    expect(m.stats.peakConnections).toBe(4);
    expect(m.stats.connections).toBe(4);
  });
});
