/**
 * The connection-count policy in a closed loop with real transfers against the test bed (issue 12's
 * scenarios a–c at 20 ms with slow start): it should find what each server rewards, and never storm one
 * that refuses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionCount } from '../../src/engine/scheduler/connections/connection-count';
import { startMirror, type Mirror, type MirrorOptions } from '../support/mirror-server';
import { runPolicy } from '../support/policy-client';

const MB = 1_000_000;
const size = 256 * 1024 * 1024;
const open: Mirror[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.close()));
});

async function mirror(options: Omit<MirrorOptions, 'size'>): Promise<Mirror> {
  const m = await startMirror({ size, latencyMs: 20, slowStart: true, ...options });
  open.push(m);
  return m;
}

describe('the connection count against the test bed', () => {
  it('(a) grows when the server caps each connection at 1 MB/s', async () => {
    const m = await mirror({ rate: 16 * MB, connectionRate: 1 * MB });
    const policy = new ConnectionCount();
    const run = await runPolicy(policy, m.url, size, 5_000);
    const steps = run.samples.filter(([, l], i) => l !== run.samples[i - 1]?.[1]).map(([t, l]) => `${Math.round(t)} ms: ${l}`);
    console.log(
      `(a) ${JSON.stringify(policy.reason)}; most open ${m.stats.peakConnections}; ${(run.bytes / 5 / MB).toFixed(1)} MB/s; ${steps.join(', ')}`,
    );
    // 16 within about a second on an idle machine. A loaded one serves less than 16 MB/s in all (3 MB/s with
    // three copies of this file at once on 2 cores), where more connections rightly stop paying: the test
    // asserts only the first step, which pays on any machine that serves 4 MB/s; the model tests the rest.
    expect(m.stats.peakConnections).toBeGreaterThanOrEqual(4);
    expect(m.stats.peakConnections).toBeLessThanOrEqual(16);
    expect(run.refusals).toBe(0);
  });

  it('(b) stays at a few connections when the server caps the total at 8 MB/s', async () => {
    const m = await mirror({ rate: 8 * MB });
    const policy = new ConnectionCount();
    const run = await runPolicy(policy, m.url, size, 4_000);
    console.log(`(b) ${JSON.stringify(policy.reason)}; most open ${m.stats.peakConnections}; ${(run.bytes / 4 / MB).toFixed(1)} MB/s`);
    expect(m.stats.peakConnections).toBeLessThanOrEqual(4);
    expect(policy.limit(4_000)).toBeLessThanOrEqual(3);
  });

  it('(c) backs off at the first 503 past two connections and does not try again for long', async () => {
    const m = await mirror({ rate: 8 * MB, connectionLimit: { max: 2 } });
    const policy = new ConnectionCount();
    const run = await runPolicy(policy, m.url, size, 5_000);
    const refused = m.stats.requests.filter((r) => r.status === 503).length;
    console.log(
      `(c) ${JSON.stringify(policy.reason)}; most open ${m.stats.peakConnections}; ${refused} × 503; ${(run.bytes / 5 / MB).toFixed(1)} MB/s`,
    );
    // The one step past two (2 → 4) is refused; no other try in the next 30 s.
    expect(refused).toBeLessThanOrEqual(2);
    expect(policy.serverLimit).toBe(2);
    const triesPastTwo = run.samples.filter(([, limit], i) => limit > 2 && (run.samples[i - 1]?.[1] ?? 0) <= 2);
    expect(triesPastTwo.length).toBeLessThanOrEqual(1);
  });
});
