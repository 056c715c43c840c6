/** The engine's source discovery against hostile loopback servers. */
import { afterEach, describe, expect, it } from 'vitest';
import { fetchMetalink } from '../../src/engine';
import { drip, startHostile, type HostileServer } from '../support/hostile-server';

let servers: HostileServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function hostile(handler: Parameters<typeof startHostile>[0]): Promise<HostileServer> {
  const server = await startHostile(handler);
  servers.push(server);
  return server;
}

describe('fetchMetalink', () => {
  it('gives up on a Metalink body that drips for ever', { timeout: 5000 }, async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/metalink4+xml' });
      res.write('<metalink xmlns="urn:ietf:params:xml:ns:metalink">');
      drip(res, 50);
    });
    const url = `${server.origin}/drip.meta4`;
    const started = Date.now();
    await expect(fetchMetalink(url, fetch, undefined, { maxBytes: 4096, timeoutMs: 600 })).rejects.toThrow(
      `the Metalink file ${url} did not arrive within 600 ms`,
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('gives up on a server that never sends headers', { timeout: 5000 }, async () => {
    const server = await hostile(() => {});
    const url = `${server.origin}/silent.meta4`;
    await expect(fetchMetalink(url, fetch, undefined, { maxBytes: 4096, timeoutMs: 600 })).rejects.toThrow('did not arrive within 600 ms');
  });
});
