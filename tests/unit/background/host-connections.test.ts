import { afterEach, expect, test } from 'vitest';
import { DOWNLOAD_CONNECTIONS_PER_HOST, sharingHostConnections } from '../../../src/background/jobs/host-connections';
import type { HttpFetch } from '../../../src/engine';
import { startMirror, type Mirror } from '../../support/mirror-server';

const servers: Mirror[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(): Promise<Mirror> {
  // Slow enough that every request is still open while the next ones are asked.
  const m = await startMirror({ size: 1024 * 1024, seed: 3, connectionRate: 64 * 1024 });
  servers.push(m);
  return m;
}

const nodeFetch: HttpFetch = (url, init) => fetch(url, init);
const openOn = (m: Mirror) => m.stats.requests.filter((r) => r.endedAt === undefined).length;
/** Long enough for a request the gate let through to reach the server: what must not come has not. */
const settle = () => new Promise((r) => setTimeout(r, 200));

/** A request as the engine makes it: its own signal, aborted once it is done with the answer. */
function ask(gated: HttpFetch, m: Mirror) {
  const controller = new AbortController();
  const answer = gated(m.url, { signal: controller.signal });
  answer.catch(() => {});
  return { answer, end: () => controller.abort(new Error('done')), controller };
}

test("Stitch's downloads keep one of a host's six connections free; the next request goes when one ends", async () => {
  const a = await server();
  const gated = sharingHostConnections(nodeFetch);
  const requests = Array.from({ length: DOWNLOAD_CONNECTIONS_PER_HOST + 2 }, () => ask(gated, a));
  // Five arrive (as soon as a busy machine lets them), and no more come after them.
  await expect.poll(() => a.stats.requests.length).toBe(5);
  await settle();
  expect(DOWNLOAD_CONNECTIONS_PER_HOST).toBe(5);
  expect(openOn(a)).toBe(5);
  expect(a.stats.requests).toHaveLength(5);

  // The free sixth is there for anyone else, e.g. the take-over's probe.
  const probe = await fetch(a.url, { headers: { Range: 'bytes=0-0' } });
  await probe.body?.cancel();
  expect(probe.status).toBe(206);

  requests[0]!.end();
  await expect.poll(() => a.stats.requests.length).toBe(7);
  await settle();
  expect(a.stats.requests).toHaveLength(7);
  for (const r of requests) r.end();
});

test('another origin is not held back, a request that waits can be aborted, and a failed fetch gives its place back', async () => {
  const [a, b] = [await server(), await server()];
  let failNext = false;
  const gated = sharingHostConnections((url, init) => (failNext ? Promise.reject(new TypeError('Failed to fetch')) : fetch(url, init)));
  const held = Array.from({ length: DOWNLOAD_CONNECTIONS_PER_HOST + 1 }, () => ask(gated, a));
  await expect.poll(() => a.stats.requests.length).toBe(5);
  const other = ask(gated, b);
  expect((await other.answer).status).toBe(200);

  const waiting = held.at(-1)!;
  waiting.controller.abort(new Error('cut'));
  await expect(waiting.answer).rejects.toThrow('cut');
  expect(a.stats.requests).toHaveLength(5);

  // A fetch that fails frees its place at once: the next one is sent.
  held[0]!.end();
  failNext = true;
  const failing = ask(gated, a);
  await expect(failing.answer).rejects.toThrow('Failed to fetch');
  failNext = false;
  const next = ask(gated, a);
  expect((await next.answer).status).toBe(200);
  for (const r of [...held, other, next]) r.end();
});
