/**
 * `npm run bench:browser`: the same file from one uncapped loopback server, link click to the
 * exact file in the download folder, in Chromium and Firefox, each with and without Stitch; then
 * SHA-256, IndexedDB and OPFS write rates inside each browser. Not a test: it prints figures.
 *
 *   npm run bench:browser                         # 1 GiB, 3 runs of each
 *   npm run bench:browser -- --size-mib 256 --runs 1 --only chromium --skip-probes
 *   npm run bench:browser -- --baseline-extension /tmp/main-build/dist/extension   # before/after
 *   npm run bench:browser -- --only chromium --skip-probes --aria2   # also: Stitch hands it to a local aria2c
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core';
import type { Browser as FirefoxBrowser } from 'puppeteer-core';
import { Aria2Client, type Aria2Status } from '../src/background/aria2/rpc';
import { startAria2, type Aria2Daemon } from '../tests/support/aria2-daemon';
import { contentSha256 } from '../tests/support/content';
import { startMirror, type Mirror } from '../tests/support/mirror-server';
import { CHROMIUM, chromiumArgs, EXTENSION_DIR, makeProfile } from '../tests/e2e/support/chromium';
import { installAddon, startFirefox } from '../tests/e2e/support/firefox-launch';
import { fileSha256, waitForFile } from '../tests/e2e/support/files';
import { startLinkPage } from '../tests/e2e/support/link-page';
import {
  fetchPipelineMBps,
  idbWriteMBps,
  type PipelineStage,
  opfsSyncMBps,
  opfsWritableMBps,
  OPFS_SYNC_WORKER,
  sha256MBps,
  type IdbVariant,
} from './browser-probes';

const MiB = 1024 * 1024;
const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    runs: { type: 'string', default: '3' },
    only: { type: 'string' },
    'skip-probes': { type: 'boolean', default: false },
    'skip-downloads': { type: 'boolean', default: false },
    'probe-rounds': { type: 'string', default: '3' },
    'probe-mib': { type: 'string', default: '256' },
    /** Another build of the extension (e.g. main's) to run beside this one, for a before/after. */
    'baseline-extension': { type: 'string' },
    'idb-variants': { type: 'string' },
    /** Only the download path's stages in each browser, without the engine (see fetchPipelineMBps). */
    'pipeline-only': { type: 'boolean', default: false },
    /** Also the hand-off: Stitch sends the download to a local `aria2c --enable-rpc` (Chromium), click to aria2's file. */
    aria2: { type: 'boolean', default: false },
  },
});
const SIZE = Number(args['size-mib']) * MiB;
const RUNS = Number(args.runs);
const BROWSERS = (args.only ?? 'chromium,firefox').split(',') as ('chromium' | 'firefox')[];
const SEED = 7;
const FILENAME = 'bench.bin';
const PROBE_BYTES = Number(args['probe-mib']) * MiB;
const PROBE_ROUNDS = Number(args['probe-rounds']);
const BASELINE = args['baseline-extension'];
/** Indexes into IDB_VARIANTS to probe (comma-separated), for a quick look at a few. */
const ONLY_VARIANTS = args['idb-variants']?.split(',').map(Number);

interface Run {
  /** Click to the exact file in the folder. */
  seconds: number;
  /** Click to the server having sent the file's last byte. */
  lastByteSeconds: number;
  /** Click to the browser's IndexedDB files holding the whole file (Stitch's last byte stored). */
  storedSeconds: number;
  /** Click to the first entry in the download folder after the last byte (Stitch's save starting). */
  saveStartSeconds: number;
  peakRssMiB: number;
}

/** What the bench needs of a launched browser, either kind. */
interface Launched {
  clickLink(url: string): Promise<void>;
  /** The browser's profile folder, where its IndexedDB keeps large values as files. */
  profileDir: string;
  /** Every process of the browser, for its memory. */
  rss(): number;
  close(): Promise<void>;
}

/** `extension`: the unpacked extension's folder, or undefined for the browser alone. */
async function launchChromium(profileDir: string, extension: string | undefined): Promise<Launched & { context: BrowserContext }> {
  const flags = chromiumArgs(extension).filter((flag) => extension !== undefined || !flag.includes('extension'));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: flags,
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'default' } as never);
  if (extension !== undefined) await serviceWorker(context);
  return {
    context,
    async clickLink(url) {
      await page.goto(url);
      await page.click('#file');
    },
    profileDir,
    rss: () => rssOf((args) => args.includes(profileDir)),
    close: () => context.close(),
  };
}

async function serviceWorker(context: BrowserContext): Promise<Worker> {
  const existing = context.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://'));
  return existing ?? (await context.waitForEvent('serviceworker', { timeout: 10_000 }));
}

async function launchFirefox(downloads: string, extension: string | undefined): Promise<Launched & { browser: FirefoxBrowser }> {
  const browser = await startFirefox(downloads);
  if (extension !== undefined) await installAddon(browser, extension);
  const pid = browser.process()?.pid;
  if (pid === undefined) throw new Error('Firefox was started without a process id');
  const page = await browser.newPage();
  const spawnargs = browser.process()?.spawnargs ?? [];
  const profileDir = spawnargs[spawnargs.indexOf('--profile') + 1] ?? spawnargs[spawnargs.indexOf('-profile') + 1];
  if (profileDir === undefined) throw new Error(`no profile folder in Firefox's arguments: ${spawnargs.join(' ')}`);
  return {
    browser,
    profileDir,
    async clickLink(url) {
      await page.goto(url);
      await page.click('#file');
    },
    rss: () => rssOfTree(pid),
    close: () => browser.close(),
  };
}

/**
 * Bytes stored under a profile where Stitch keeps downloads: the files IndexedDB keeps large
 * values in (Chromium's `IndexedDB/*.blob` and Firefox's `idb/*.files` folders; Stitch's records
 * are Blobs of 4 MiB) and the origin private file system (Firefox's `fs`, Chromium's `File System`
 * folders), counted as the
 * disk blocks they hold: a file written at offsets out of order has holes until its last block
 * is stored.
 */
function idbFileBytes(profileDir: string): number {
  let bytes = 0;
  const walk = (dir: string, inBlobs: boolean): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // not there yet, or removed meanwhile
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory())
        walk(
          path,
          inBlobs || entry.name.endsWith('.blob') || entry.name.endsWith('.files') || entry.name === 'fs' || entry.name === 'File System',
        );
      else if (inBlobs) bytes += diskBytes(path);
    }
  };
  walk(profileDir, false);
  return bytes;
}

function diskBytes(path: string): number {
  try {
    return statSync(path).blocks * 512;
  } catch {
    return 0;
  }
}

/** Resident memory (bytes) of the processes whose command line passes `match`. */
function rssOf(match: (args: string) => boolean): number {
  let kib = 0;
  for (const { rss, args } of processes()) if (match(args)) kib += rss;
  return kib * 1024;
}

/** Resident memory (bytes) of `pid` and all its descendants. */
function rssOfTree(pid: number): number {
  const all = processes();
  const inTree = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (inTree.has(p.pid) || !inTree.has(p.ppid)) continue;
      inTree.add(p.pid);
      grew = true;
    }
  }
  return all.filter((p) => inTree.has(p.pid)).reduce((sum, p) => sum + p.rss, 0) * 1024;
}

function processes(): { pid: number; ppid: number; rss: number; args: string }[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=,args='], { encoding: 'utf8', maxBuffer: 16 * MiB });
  return out
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const [pid, ppid, rss, ...rest] = line.trim().split(/\s+/);
      return { pid: Number(pid), ppid: Number(ppid), rss: Number(rss), args: rest.join(' ') };
    });
}

/**
 * One download, link click to file; checks the saved file's SHA-256 after the clock stops. With `aria2`
 * (Chromium with Stitch), Stitch's rule hands the download to that aria2, and the file is aria2's.
 */
async function downloadOnce(
  browser: 'chromium' | 'firefox',
  extension: string | undefined,
  expectedSha: string,
  aria2?: Aria2Daemon,
): Promise<Run> {
  const mirror = await startMirror({ size: SIZE, seed: SEED, filename: FILENAME });
  const links = await startLinkPage([{ id: 'file', href: mirror.url, text: 'the file' }]);
  const profile = makeProfile();
  const launched =
    browser === 'chromium' ? await launchChromium(profile.dir, extension) : await launchFirefox(profile.downloads, extension);
  if (aria2 && 'context' in launched) await handEverythingTo(aria2, launched.context);
  let peak = 0;
  let lastByte = 0;
  let saveStart = 0;
  let stored = 0;
  const started = performance.now();
  const sampler = setInterval(() => {
    if (!lastByte && mirror.stats.bytesSent >= SIZE) lastByte = performance.now();
    if (extension !== undefined && !stored && idbFileBytes(launched.profileDir) >= SIZE) stored = performance.now();
    // Stitch erases the browser's own copy as it takes over, so after the last byte the folder
    // holds only the save.
    else if (lastByte && !saveStart && readdirSync(profile.downloads).length > 0) saveStart = performance.now();
    peak = Math.max(peak, launched.rss());
  }, 50);
  try {
    await launched.clickLink(links.url);
    const saved = aria2 ? await aria2Finished(aria2, FILENAME) : await waitForFile(profile.downloads, FILENAME, SIZE, 600_000);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if ((await fileSha256(saved)) !== expectedSha) throw new Error(`${browser} with ${extension ?? 'no extension'} saved a wrong file`);
    const at = (time: number) => ((time || performance.now()) - started) / 1000;
    return {
      seconds,
      lastByteSeconds: at(lastByte),
      storedSeconds: extension === undefined ? at(lastByte) : at(stored),
      saveStartSeconds: at(saveStart),
      peakRssMiB: Math.round(peak / MiB),
    };
  } finally {
    clearInterval(sampler);
    await launched.close().catch(() => {});
    await mirror.close();
    await links.close();
    profile.remove();
  }
}

/** Stitch's settings: every download it takes over goes to `aria2` (the size rule at 1 byte). */
async function handEverythingTo(aria2: Aria2Daemon, context: BrowserContext): Promise<void> {
  const worker = await serviceWorker(context);
  const page = await context.newPage();
  await page.goto(`chrome-extension://${new URL(worker.url()).host}/options.html`);
  await page.evaluate(
    async ({ url, secret }) => {
      const reply = (await chrome.runtime.sendMessage({ type: 'get-settings' })) as { value: { settings: object } };
      await chrome.runtime.sendMessage({
        type: 'set-settings',
        settings: { ...reply.value.settings, aria2Url: url, aria2Secret: secret, aria2MinBytes: 1 },
      });
    },
    { url: aria2.url, secret: aria2.secret },
  );
  await page.close();
}

/** aria2 gives a file its whole size at once (and its control file only after): it is finished when aria2 says so. */
async function aria2Finished(aria2: Aria2Daemon, name: string): Promise<string> {
  const client = new Aria2Client({ url: aria2.url, secret: aria2.secret });
  const path = join(aria2.dir, name);
  const deadline = performance.now() + 600_000;
  for (;;) {
    const stopped = await client.call<Aria2Status[]>('aria2.tellStopped', 0, 100, ['status', 'files']);
    if (stopped.some((d) => d.status === 'complete' && d.files?.[0]?.path === path)) {
      // Forgotten, so the next run's wait is for its own download.
      await client.call('aria2.purgeDownloadResult');
      return path;
    }
    if (performance.now() > deadline) throw new Error(`aria2 did not finish ${name}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round = (x: number, digits = 2) => +x.toFixed(digits);

async function downloads(): Promise<Record<string, unknown>> {
  const expectedSha = await contentSha256(SEED, SIZE);
  const results: Record<string, unknown> = {};
  for (const browser of BROWSERS) {
    const alone: Run[] = [];
    const stitch: Run[] = [];
    const baseline: Run[] = [];
    const handed: Run[] = [];
    const aria2 = args.aria2 && browser === 'chromium' ? await startAria2() : undefined;
    // Alternating keeps every side under the same background load.
    for (let run = 0; run < RUNS; run++) {
      alone.push(await downloadOnce(browser, undefined, expectedSha));
      stitch.push(await downloadOnce(browser, EXTENSION_DIR, expectedSha));
      if (BASELINE) baseline.push(await downloadOnce(browser, BASELINE, expectedSha));
      if (aria2) {
        handed.push(await downloadOnce(browser, EXTENSION_DIR, expectedSha, aria2));
        rmSync(join(aria2.dir, FILENAME), { force: true });
        console.log(
          `${browser} run ${run + 1}: handed to aria2 ${handed.at(-1)!.seconds.toFixed(2)} s (server's last byte ${handed.at(-1)!.lastByteSeconds.toFixed(2)})`,
        );
      }
      // Stitch's timeline: server's last byte sent, last byte stored, save started, file complete.
      const last = (runs: Run[]) => {
        const r = runs.at(-1)!;
        const steps = [r.lastByteSeconds, r.storedSeconds, Math.min(r.seconds, r.saveStartSeconds)].map((x) => x.toFixed(2));
        return `${r.seconds.toFixed(2)} s (sent ${steps[0]}, stored ${steps[1]}, save ${steps[2]})`;
      };
      console.log(
        `${browser} run ${run + 1}: alone ${last(alone)}, with Stitch ${last(stitch)}${BASELINE ? `, with the baseline build ${last(baseline)}` : ''}`,
      );
    }
    const summary = (runs: Run[]) => ({
      medianSeconds: round(median(runs.map((r) => r.seconds))),
      medianLastByteSeconds: round(median(runs.map((r) => r.lastByteSeconds))),
      medianStoredSeconds: round(median(runs.map((r) => r.storedSeconds))),
      medianSaveStartSeconds: round(median(runs.map((r) => Math.min(r.seconds, r.saveStartSeconds)))),
      medianLastByteToFileSeconds: round(median(runs.map((r) => r.seconds - r.lastByteSeconds))),
      medianLastByteToSaveStartSeconds: round(median(runs.map((r) => Math.min(r.seconds, r.saveStartSeconds) - r.lastByteSeconds))),
      peakRssMiB: Math.max(...runs.map((r) => r.peakRssMiB)),
      runs: runs.map((r) => round(r.seconds)),
    });
    const a = summary(alone);
    const s = summary(stitch);
    const b = BASELINE ? summary(baseline) : undefined;
    const h = aria2 ? summary(handed) : undefined;
    await aria2?.close();
    results[browser] = {
      alone: a,
      stitch: s,
      ratio: round(s.medianSeconds / a.medianSeconds),
      ...(b && { baseline: b, baselineRatio: round(b.medianSeconds / a.medianSeconds) }),
      ...(h && { aria2: h, aria2Ratio: round(h.medianSeconds / a.medianSeconds) }),
    };
    console.log(`${browser}: ${JSON.stringify(results[browser])}`);
  }
  return results;
}

const IDB_VARIANTS: IdbVariant[] = [
  { record: 4 * MiB, inflight: 4, kind: 'blob', durability: 'relaxed' }, // what IdbStore did first
  { record: 4 * MiB, inflight: 8, kind: 'blob', durability: 'relaxed' },
  { record: 8 * MiB, inflight: 4, kind: 'blob', durability: 'relaxed' },
  { record: 8 * MiB, inflight: 8, kind: 'blob', durability: 'relaxed' },
  { record: 16 * MiB, inflight: 4, kind: 'blob', durability: 'relaxed' },
  { record: 4 * MiB, inflight: 4, kind: 'buffer', durability: 'relaxed' },
  { record: 4 * MiB, inflight: 4, kind: 'blob', durability: 'default' },
  { record: 4 * MiB, inflight: 8, kind: 'blob', durability: 'relaxed', stores: 4 },
  { record: 4 * MiB, inflight: 8, kind: 'blob', durability: 'relaxed', stores: 8 },
  { record: 4 * MiB, inflight: 16, kind: 'blob', durability: 'relaxed', stores: 4 },
];
const variantName = (v: IdbVariant) =>
  `${v.kind} ${v.record / MiB} MiB x${v.inflight} ${v.durability}${v.stores ? ` over ${v.stores} stores` : ''}`;
const HASH_WASM_UMD = readFileSync(createRequire(import.meta.url).resolve('hash-wasm/dist/sha256.umd.min.js'), 'utf8');

/** tsx keeps function names with an `__name` helper the probes' source text calls, which the browser lacks. */
const KEEP_NAMES_HELPER = 'globalThis.__name ??= (fn) => fn';

/** Anything that can run a probe: a Playwright page or worker, or a puppeteer page. */
type Evaluator = { evaluate(fn: string | ((arg: never) => unknown), arg?: unknown): Promise<unknown> };
const evaluate = <A, R>(target: Evaluator, fn: (arg: A) => Promise<R>, arg: A) =>
  (target.evaluate as (fn: (arg: A) => Promise<R>, arg: A) => Promise<R>)(fn, arg);

const STAGES: PipelineStage[] = ['read', 'copy', 'blob', 'idb', 'idb, four stores'];

/**
 * The download path's stages (fetchPipelineMBps) from a loopback server, in rounds; medians.
 * `mirror`: a server the target may fetch with a Range header (same origin, or an extension's).
 */
async function probePipeline(target: Evaluator, mirror: Mirror): Promise<Record<string, number | string>> {
  await target.evaluate(KEEP_NAMES_HELPER);
  const samples = new Map<string, number[]>();
  const out: Record<string, number | string> = {};
  for (let pass = 0; pass < PROBE_ROUNDS; pass++) {
    for (const connections of [1, 4]) {
      for (const stage of STAGES) {
        const name = `${stage}, ${connections} connection${connections > 1 ? 's' : ''}`;
        await evaluate(target, fetchPipelineMBps, { url: mirror.url, size: PROBE_BYTES, connections, stage })
          .then((mbps) => samples.set(name, [...(samples.get(name) ?? []), mbps]))
          .catch((error: unknown) => (out[name] = `failed: ${String(error).split('\n')[0]}`));
      }
    }
  }
  for (const [name, mbps] of samples) out[name] = round(median(mbps), 0);
  return out;
}

async function probeContext(target: Evaluator): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  await target.evaluate(KEEP_NAMES_HELPER);
  if (args['pipeline-only']) return out;
  try {
    await target.evaluate(HASH_WASM_UMD);
    const hash = await evaluate(target, sha256MBps, { total: PROBE_BYTES });
    out.sha256MBps = { wasm: round(hash.wasm, 0), subtleOneShot: round(hash.subtleOneShot, 0) };
  } catch (error) {
    out.sha256MBps = `failed: ${String(error).split('\n')[0]}`;
  }
  // Rounds over all variants, so a burst of load elsewhere hits them alike; medians are reported.
  const samples = new Map<string, number[]>();
  const failures: Record<string, string> = {};
  for (let pass = 0; pass < PROBE_ROUNDS; pass++) {
    for (const variant of IDB_VARIANTS.filter((v) => !ONLY_VARIANTS || ONLY_VARIANTS.includes(IDB_VARIANTS.indexOf(v)))) {
      const name = variantName(variant);
      await evaluate(target, idbWriteMBps, { total: PROBE_BYTES, variant })
        .then((mbps) => samples.set(name, [...(samples.get(name) ?? []), mbps]))
        .catch((error: unknown) => (failures[name] = `failed: ${String(error).split('\n')[0]}`));
    }
  }
  const idb: Record<string, number | string> = { ...failures };
  for (const [name, mbps] of samples) idb[name] = round(median(mbps), 0);
  out.idbWriteMBps = idb;
  return out;
}

/** A loopback origin with a page and the OPFS worker script (extension CSP forbids blob: workers). */
async function opfsOrigin(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const worker = req.url === '/opfs-worker.js';
    res.writeHead(200, { 'content-type': worker ? 'text/javascript' : 'text/html' });
    res.end(worker ? OPFS_SYNC_WORKER : '<!doctype html><title>OPFS probe</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

async function probeOpfs(page: Evaluator, origin: string): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  await page.evaluate(KEEP_NAMES_HELPER);
  const record = 4 * MiB;
  out['sync access handle in a worker'] = await evaluate(page, opfsSyncMBps, {
    total: PROBE_BYTES,
    record,
    workerUrl: `${origin}opfs-worker.js`,
  })
    .then((x) => round(x, 0))
    .catch((error: unknown) => `failed: ${String(error)}`);
  out['createWritable in the page'] = await evaluate(page, opfsWritableMBps, { total: PROBE_BYTES, record })
    .then((x) => round(x, 0))
    .catch((error: unknown) => `failed: ${String(error)}`);
  return out;
}

async function probes(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  const { url: origin, server } = await opfsOrigin();
  const pipelineMirror = await startMirror({ size: PROBE_BYTES, seed: SEED });
  try {
    if (BROWSERS.includes('chromium')) {
      const profile = makeProfile();
      const launched = await launchChromium(profile.dir, EXTENSION_DIR);
      try {
        const worker = await serviceWorker(launched.context);
        const id = new URL(worker.url()).host;
        const page: Page = await launched.context.newPage();
        await page.goto(`chrome-extension://${id}/popup.html`);
        const loopback = await launched.context.newPage();
        await loopback.goto(origin);
        results.chromium = {
          'service worker': { pipelineMBps: await probePipeline(worker, pipelineMirror), ...(await probeContext(worker)) },
          ...(!args['pipeline-only'] && {
            'extension page': await probeContext(page),
            opfsWriteMBps: await probeOpfs(loopback, origin),
          }),
        };
      } finally {
        await launched.close();
        profile.remove();
      }
      console.log(`chromium probes: ${JSON.stringify(results.chromium, null, 2)}`);
    }
    if (BROWSERS.includes('firefox')) {
      const profile = makeProfile();
      const launched = await launchFirefox(profile.downloads, EXTENSION_DIR);
      try {
        // WebDriver may not open moz-extension:// pages: a loopback page uses the same IndexedDB,
        // OPFS and WebAssembly; the digest e2e test shows the hash compiles in the background page.
        const loopback = await launched.browser.newPage();
        // The mirror's origin (its 404 page): ranged fetches need no CORS there.
        await loopback.goto(new URL('/', pipelineMirror.url).href);
        const pipelineMBps = await probePipeline(loopback, pipelineMirror);
        await loopback.goto(origin);
        results.firefox = {
          'loopback page': { pipelineMBps, ...(await probeContext(loopback)) },
          ...(!args['pipeline-only'] && { opfsWriteMBps: await probeOpfs(loopback, origin) }),
        };
      } finally {
        await launched.close();
        profile.remove();
      }
      console.log(`firefox probes: ${JSON.stringify(results.firefox, null, 2)}`);
    }
  } finally {
    server.close();
    await pipelineMirror.close();
  }
  return results;
}

const report = {
  sizeMiB: SIZE / MiB,
  runs: RUNS,
  downloads: args['skip-downloads'] ? undefined : await downloads(),
  probes: args['skip-probes'] ? undefined : await probes(),
};
console.log(`STITCH BROWSER BENCH ${JSON.stringify(report)}`);
