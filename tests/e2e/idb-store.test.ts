import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHROMIUM } from './support/chromium';
import { FIREFOX } from './support/firefox';
import { CUTS, writeBytes } from './support/idb-cuts';
import type { ReadBack } from './support/idb-cuts-page';
import { onCleanup } from './support/setup';

/**
 * IdbStore on each browser's own IndexedDB: records cut apart by discards and overlapping
 * writes keep exactly their bytes. Firefox stores a slice of a Blob read from IndexedDB as
 * the whole Blob, so a kept tail once read back from the start of its original record.
 */
let pageUrl: string;

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [resolve(import.meta.dirname, 'support/idb-cuts-page.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'StitchCuts',
    target: 'es2022',
    write: false,
  });
  const script = bundle.outputFiles[0]!.text;
  const worker = await build({
    entryPoints: [resolve(import.meta.dirname, '../../src/storage/opfs-worker.ts')],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    write: false,
  });
  const workerScript = worker.outputFiles[0]!.text;
  const server = createServer((req, res) => {
    if (req.url === '/cuts.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script);
    } else if (req.url === '/opfs-worker.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(workerScript);
    } else {
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><script src="/cuts.js"></script>');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  // Both tests use it: onCleanup would close it after the first.
  afterAll(() => new Promise((r) => server.close(r)));
  pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

/** The stored ranges CUTS leave and the SHA-256 of each, from a byte-by-byte model. */
function expected(): Pick<ReadBack, 'ranges' | 'read'> {
  const size = Math.max(...CUTS.map((c) => (c.kind === 'write' ? c.offset + c.length : c.end)));
  const bytes = new Uint8Array(size);
  const stored = new Uint8Array(size);
  for (const cut of CUTS) {
    if (cut.kind === 'write') {
      bytes.set(writeBytes(cut), cut.offset);
      stored.fill(1, cut.offset, cut.offset + cut.length);
    } else {
      stored.fill(0, cut.start, cut.end);
    }
  }
  const ranges: ReadBack['ranges'] = [];
  for (let i = 0; i < size;) {
    if (!stored[i]) {
      i++;
      continue;
    }
    const start = i;
    while (i < size && stored[i]) i++;
    ranges.push({ start, end: i });
  }
  const read = ranges.map(({ start, end }) => createHash('sha256').update(bytes.subarray(start, end)).digest('hex'));
  return { ranges, read };
}

const RUN = 'StitchCuts.runCuts()';

/** Runs `run` on the cuts page in headless Firefox. */
async function inFirefox(run: string): Promise<ReadBack> {
  const browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true });
  onCleanup(() => browser.close());
  const page = await browser.newPage();
  await page.goto(pageUrl);
  return (await page.evaluate(run)) as ReadBack;
}

/** What a store read back must be: CUTS' ranges, each with its exact bytes through read() and readBlobs(). */
function expectExact(got: ReadBack, records: string): void {
  const want = expected();
  expect(got.records).toBe(records);
  expect(got.ranges).toEqual(want.ranges);
  expect(got.read).toEqual(want.read);
  expect(got.blobs).toEqual(want.read);
}

describe('IdbStore keeps the exact bytes of records it cuts apart, in the real browsers', () => {
  test('Firefox', async () => {
    expectExact(await inFirefox(RUN), 'blob');
  });

  test('Chromium', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    onCleanup(() => browser.close());
    const page = await browser.newPage();
    await page.goto(pageUrl);
    expectExact(await page.evaluate<ReadBack>(RUN), 'blob');
  });
});

describe('OpfsStore (Firefox) keeps the exact bytes of ranges it writes over and discards', () => {
  test('Firefox, through the OPFS worker', async () => {
    expectExact(await inFirefox('StitchCuts.runOpfsCuts()'), 'file');
  });
});
