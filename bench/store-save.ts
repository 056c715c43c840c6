/**
 * Why the browsers keep downloads in the origin private file system (issue 13): in each browser,
 * on a loopback page, 1 GiB written as 4 MiB records into OPFS (a sync access handle in a dedicated
 * worker, as opfs-worker.ts does) or as Blob records into IndexedDB (relaxed, 4 transactions in
 * flight, as IdbStore did), then saved as the browser saves a Stitch download (a blob URL of the
 * OPFS file, or of a Blob of the IndexedDB records) until the file is complete in the folder.
 * Not a test: it prints MB/s.
 *
 *   npx tsx bench/store-save.ts [--size-mib 1024] [--runs 2] [--only chromium,firefox]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM, chromiumArgs } from '../tests/e2e/support/chromium';
import { startFirefox } from '../tests/e2e/support/firefox-launch';

const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    runs: { type: 'string', default: '2' },
    only: { type: 'string', default: 'chromium,firefox' },
  },
});
const MiB = 1024 * 1024;
const SIZE = Number(args['size-mib']) * MiB;
const WORKER = `
onmessage = async (event) => {
  const { total, record } = event.data;
  const root = await navigator.storage.getDirectory();
  const file = await root.getFileHandle('stitch-store-save', { create: true });
  const source = new Uint8Array(record);
  for (let i = 0; i < source.length; i += 65536) crypto.getRandomValues(source.subarray(i, i + 65536));
  const t = performance.now();
  const access = await file.createSyncAccessHandle();
  for (let offset = 0; offset < total; offset += record) { source[0] = offset; access.write(source, { at: offset }); }
  access.flush(); access.close();
  postMessage({ mbps: total / 1e6 / ((performance.now() - t) / 1000) });
};`;
const server = createServer((req, res) => {
  const w = req.url === '/w.js';
  res.writeHead(200, { 'content-type': w ? 'text/javascript' : 'text/html' });
  res.end(w ? WORKER : '<!doctype html><title>stitch-store-save</title>');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

async function waitFile(dir: string, name: string): Promise<void> {
  for (;;) {
    try {
      if (statSync(join(dir, name)).size === SIZE && !readdirSync(dir).some((f) => f.endsWith('.part') || f.endsWith('.crdownload')))
        return;
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Opened {
  evaluate<A, R>(fn: (arg: A) => Promise<R>, arg: A): Promise<R>;
  close(): Promise<void>;
}

async function open(browserName: string, downloads: string, profileDir: string): Promise<Opened> {
  if (browserName === 'firefox') {
    const browser = await startFirefox(downloads);
    const page = await browser.newPage();
    await page.goto(origin);
    return { evaluate: (fn, arg) => page.evaluate(fn as never, arg as never), close: () => browser.close() };
  }
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: chromiumArgs(),
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads } as never);
  await page.goto(origin);
  return { evaluate: (fn, arg) => page.evaluate(fn as never, arg) as never, close: () => context.close() };
}

for (const browserName of args.only.split(','))
  for (let run = 0; run < Number(args.runs); run++) {
    for (const kind of ['opfs', 'idb'] as const) {
      const downloads = mkdtempSync(join(tmpdir(), 'store-save-dl-'));
      const profileDir = mkdtempSync(join(tmpdir(), 'store-save-profile-'));
      const page = await open(browserName, downloads, profileDir);
      const writeMBps = await page.evaluate(
        async ({ kind, total, workerUrl }: { kind: string; total: number; workerUrl: string }) => {
          const record = 4 * 1024 * 1024;
          if (kind === 'opfs') {
            const w = new Worker(workerUrl);
            const r = await new Promise<{ mbps: number }>((res) => {
              w.onmessage = (e: MessageEvent<{ mbps: number }>) => res(e.data);
              w.postMessage({ total, record });
            });
            return r.mbps;
          }
          const db = await new Promise<IDBDatabase>((res) => {
            const o = indexedDB.open('stitch-store-save', 1);
            o.onupgradeneeded = () => o.result.createObjectStore('b');
            o.onsuccess = () => res(o.result);
          });
          const source = new Uint8Array(record);
          for (let i = 0; i < source.length; i += 65536) crypto.getRandomValues(source.subarray(i, i + 65536));
          const t = performance.now();
          const inFlight = new Set<Promise<void>>();
          for (let offset = 0; offset < total; offset += record) {
            source[0] = offset;
            const tx = db.transaction('b', 'readwrite', { durability: 'relaxed' });
            tx.objectStore('b').put(new Blob([source]), offset);
            const done: Promise<void> = new Promise((res) => (tx.oncomplete = () => res()));
            inFlight.add(done);
            void done.then(() => inFlight.delete(done));
            if (inFlight.size >= 4) await Promise.race(inFlight);
          }
          await Promise.all(inFlight);
          return total / 1e6 / ((performance.now() - t) / 1000);
        },
        { kind, total: SIZE, workerUrl: `${origin}w.js` },
      );
      const started = Date.now();
      await page.evaluate(async (kind: string) => {
        let blob: Blob;
        if (kind === 'opfs') {
          const root = await navigator.storage.getDirectory();
          blob = await (await root.getFileHandle('stitch-store-save')).getFile();
        } else {
          const db = await new Promise<IDBDatabase>((res) => {
            const o = indexedDB.open('stitch-store-save', 1);
            o.onsuccess = () => res(o.result);
          });
          const parts = await new Promise<Blob[]>((res) => {
            const r = db.transaction('b').objectStore('b').getAll();
            r.onsuccess = () => res(r.result as Blob[]);
          });
          blob = new Blob(parts);
        }
        const a = document.createElement('a');
        a.href = URL.createObjectURL(blob);
        a.download = 'stitch-store-save.bin';
        document.body.append(a);
        a.click();
      }, kind);
      await waitFile(downloads, 'stitch-store-save.bin');
      console.log(
        `${browserName} run ${run + 1} ${kind}: write ${writeMBps.toFixed(0)} MB/s; save ${(Date.now() - started) / 1000} s (${(SIZE / 1e6 / ((Date.now() - started) / 1000)).toFixed(0)} MB/s)`,
      );
      await page.close();
      rmSync(downloads, { recursive: true, force: true });
      rmSync(profileDir, { recursive: true, force: true });
    }
  }
server.close();
