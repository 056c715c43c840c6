/** The engine's source discovery against hostile loopback servers. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadJob, fetchMetalink, type JobStateRecord } from '../../src/engine';
import { FileStore } from '../../src/storage/file-store';
import { contentSha256 } from '../support/content';
import { FAST, runEngine } from '../support/engine-run';
import { drip, startHostile, type HostileServer } from '../support/hostile-server';
import { metalinkXml, serveDocument } from '../support/metalink-doc';
import { startMirror } from '../support/mirror-server';

let servers: Array<{ close(): Promise<void> }> = [];
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

describe('mirror lists', () => {
  const MiB = 1024 * 1024;

  /** A server answering 404 to everything: thousands of "mirrors" on one port. */
  const notFound = () => hostile((_req, res) => void res.writeHead(404).end());

  it('keeps at most 32 of 4,000 mirrors a Metalink file advertises, and saves small states', async () => {
    const size = 8 * MiB;
    const dead = await notFound();
    const sha = await contentSha256(91, size);
    const doc = await serveDocument(
      metalinkXml([{ name: 'file.bin', size, sha256: sha, urls: Array.from({ length: 4000 }, (_, i) => `${dead.origin}/m${i}/file.bin`) }]),
    );
    servers.push(doc);
    const primary = await startMirror({
      size,
      seed: 91,
      rate: 4 * MiB,
      extraHeaders: { Link: `<${doc.url}>; rel=describedby; type="application/metalink4+xml"` },
    });
    servers.push(primary);
    let stateBytes = 0;
    let saves = 0;
    const run = await runEngine(primary.url, {}, (_job, store) => {
      const save = store.saveState.bind(store);
      store.saveState = (id: string, state: JobStateRecord) => {
        stateBytes += JSON.stringify(state).length;
        saves++;
        return save(id, state);
      };
    });
    try {
      expect(run.result.status, run.result.error?.message).toBe('complete');
      expect(await run.sha256()).toBe(sha);
      expect(run.job.state.mirrors.length).toBeLessThanOrEqual(31);
      expect(new Set(dead.requests).size).toBeLessThanOrEqual(31); // before: 315 requests to 300 of them
      expect(dead.requests.length).toBeLessThanOrEqual(62);
      expect(run.notices).toContain('the Metalink file named 4000 more mirrors; 31 of them kept (at most 32 URLs per file)');
      // Before: 311 saves of about 160 kB each (50 MB); now about 16 of 2 kB.
      expect(stateBytes).toBeLessThan(1_000_000);
      expect(saves).toBeLessThan(100);
    } finally {
      await run.cleanup();
    }
  });

  it('keeps at most 32 URLs of a job created or stored with thousands', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stitch-sources-'));
    const store = new FileStore(dir);
    try {
      const mirrors = Array.from({ length: 3000 }, (_, i) => `http://127.0.0.1:1/m${i}`);
      const job = await DownloadJob.create(store, { id: 'job', url: 'http://127.0.0.1:1/f', mirrors: [...mirrors, mirrors[0]!] }, FAST);
      expect(job.state.mirrors).toEqual(mirrors.slice(0, 31));
      // A state saved before the cap is capped when it is read.
      await store.saveState('old', { ...(job.state as unknown as JobStateRecord), id: 'old', mirrors });
      expect((await DownloadJob.open(store, 'old'))!.state.mirrors).toEqual(mirrors.slice(0, 31));
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
