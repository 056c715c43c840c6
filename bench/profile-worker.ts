/**
 * Where the time goes in one real download in Chromium with the extension, click to the exact
 * file: a CPU profile of the service worker (top self and inclusive time), then the CPU seconds
 * of each of the browser's processes and threads.
 *
 *   npx tsx bench/profile-worker.ts [--size-mib N] [--extension DIR|none] [--no-profile] [--trace]
 *
 * _Always take over_ is set first: by default a download from an uncapped loopback server stays with
 * the browser, and there would be nothing of Stitch's to profile.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type CDPSession } from 'playwright-core';
import { startMirror } from '../tests/support/mirror-server';
import { CHROMIUM, chromiumArgs, EXTENSION_DIR, makeProfile } from '../tests/e2e/support/chromium';
import { applyChromiumSettings } from './stitch-settings';
import { waitForFile } from '../tests/e2e/support/files';
import { startLinkPage } from '../tests/e2e/support/link-page';

const MiB = 1024 * 1024;
const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    extension: { type: 'string', default: EXTENSION_DIR },
    out: { type: 'string', default: '/tmp/worker.cpuprofile' },
    /** Without the profiler, for the processes' CPU time alone; with --extension none, the browser alone. */
    'no-profile': { type: 'boolean', default: false },
    /** Also print, every 250 ms, the bytes the server sent and the bytes in the download folder. */
    trace: { type: 'boolean', default: false },
  },
});
const SIZE = Number(args['size-mib']) * MiB;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

type Send = (method: string, params?: object) => Promise<unknown>;

/**
 * A CDP channel to another target through a page's session (Target.sendMessageToTarget), as
 * Playwright opens sessions only on pages.
 */
async function attach(pageSession: CDPSession, targetId: string): Promise<Send> {
  const { sessionId } = await pageSession.send('Target.attachToTarget', { targetId, flatten: false });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  pageSession.on('Target.receivedMessageFromTarget', (event: { sessionId: string; message: string }) => {
    if (event.sessionId !== sessionId) return;
    const msg = JSON.parse(event.message) as { id?: number; result?: unknown; error?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.error ? { error: msg.error } : msg.result);
  });
  return (method, params = {}) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      void pageSession.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
    });
}

const mirror = await startMirror({ size: SIZE, seed: 7, filename: 'bench.bin' });
const links = await startLinkPage([{ id: 'file', href: mirror.url, text: 'the file' }]);
const profile = makeProfile();
const context = await chromium.launchPersistentContext(profile.dir, {
  executablePath: CHROMIUM,
  headless: true,
  args: chromiumArgs(args.extension).filter((flag) => args.extension !== 'none' || !flag.includes('extension')),
  acceptDownloads: true,
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const pageSession = await context.newCDPSession(page);
  await pageSession.send('Browser.setDownloadBehavior', { behavior: 'default' } as never);
  const startProfiler = async () => {
    const sw =
      context.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://')) ?? (await context.waitForEvent('serviceworker'));
    const { targetInfos } = (await pageSession.send('Target.getTargets')) as { targetInfos: { targetId: string; url: string }[] };
    const target = targetInfos.find((t) => t.url === sw.url());
    if (!target) throw new Error(`no target for ${sw.url()}: ${JSON.stringify(targetInfos)}`);
    const send = await attach(pageSession, target.targetId);
    await send('Profiler.enable');
    await send('Profiler.setSamplingInterval', { interval: 200 });
    await send('Profiler.start');
    return send;
  };
  if (args.extension !== 'none') {
    const reply = await applyChromiumSettings(context, () => ({ alwaysTakeOver: true }));
    if (!reply.ok) throw new Error(`Stitch refused Always take over: ${reply.error ?? 'no reason'}`);
  }
  const worker = args['no-profile'] ? undefined : await startProfiler();
  const cpuBefore = cpuByProcess(profile.dir);
  const started = performance.now();
  await page.goto(links.url);
  await page.click('#file');
  let lastByte = 0;
  let traced = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    if (!lastByte && mirror.stats.bytesSent >= SIZE) lastByte = now;
    if (args.trace && now - traced >= 250) {
      traced = now;
      const inFolder = readdirSync(profile.downloads).reduce(
        // A partial file may be renamed between the listing and its stat.
        (sum, name) => sum + (statSync(join(profile.downloads, name), { throwIfNoEntry: false })?.size ?? 0),
        0,
      );
      console.log(
        `${((now - started) / 1000).toFixed(2)} s: sent ${Math.round(mirror.stats.bytesSent / MiB)} MiB, in the folder ${Math.round(inFolder / MiB)} MiB`,
      );
    }
  }, 50);
  await waitForFile(profile.downloads, 'bench.bin', SIZE, 600_000);
  clearInterval(timer);
  const seconds = (performance.now() - started) / 1000;
  console.log(`click to file ${seconds.toFixed(2)} s, last byte sent at ${((lastByte - started) / 1000).toFixed(2)} s`);
  if (worker) {
    const { profile: cpu } = (await worker('Profiler.stop')) as { profile: CpuProfile };
    writeFileSync(args.out, JSON.stringify(cpu));
    report(cpu);
  }
  const cpuAfter = cpuByProcess(profile.dir);
  console.log('--- CPU seconds by process during the download (of which in the kernel)');
  for (const [pid, { kind, seconds, system }] of cpuAfter) {
    const used = seconds - (cpuBefore.get(pid)?.seconds ?? 0);
    const kernel = system - (cpuBefore.get(pid)?.system ?? 0);
    if (used >= 0.2) console.log(`${used.toFixed(2).padStart(7)} s ${`(${kernel.toFixed(2)} s)`.padStart(10)}  ${kind}`);
  }
} finally {
  await context.close();
  await mirror.close();
  await links.close();
  profile.remove();
}

/** The top self-time functions, then the top by inclusive time (callers of heavy natives). */
function report(cpu: CpuProfile): void {
  const nodes = new Map(cpu.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of cpu.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  cpu.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (cpu.timeDeltas[i] ?? 0) / 1000));
  const name = (id: number) => {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    return `${functionName || '(anon)'} ${url.split('/').pop()}:${lineNumber}`;
  };
  const bySelf = new Map<string, number>();
  const byInclusive = new Map<string, number>();
  for (const [id, ms] of self) {
    bySelf.set(name(id), (bySelf.get(name(id)) ?? 0) + ms);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      if (!seen.has(name(cur))) byInclusive.set(name(cur), (byInclusive.get(name(cur)) ?? 0) + ms);
      seen.add(name(cur));
    }
  }
  const total = (cpu.endTime - cpu.startTime) / 1000;
  const print = (title: string, times: Map<string, number>) => {
    console.log(`--- ${title} (of ${total.toFixed(0)} ms)`);
    for (const [fn, ms] of [...times].sort((a, b) => b[1] - a[1]).slice(0, 25))
      console.log(`${ms.toFixed(0).padStart(8)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${fn}`);
  };
  print('self time', bySelf);
  print('inclusive time', byInclusive);
}

/** utime + stime (and stime alone) of every process of the browser (its command line names the profile), by pid. */
function cpuByProcess(profileDir: string): Map<number, { kind: string; seconds: number; system: number }> {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8', maxBuffer: 16 * MiB });
  const result = new Map<number, { kind: string; seconds: number; system: number }>();
  const times = (f: string[]) => ({ seconds: (Number(f[11]) + Number(f[12])) / 100, system: Number(f[12]) / 100 });
  for (const line of out.split('\n')) {
    const match = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!match || !match[2]!.includes(profileDir)) continue;
    const pid = Number(match[1]);
    const type = /--type=(\S+)/.exec(match[2]!)?.[1] ?? 'browser';
    const extra = /--utility-sub-type=(\S+)/.exec(match[2]!)?.[1] ?? (match[2]!.includes('--extension-process') ? 'extension' : '');
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      result.set(pid, { kind: `${type} ${extra}`.trim(), ...times(fields) });
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const f = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
        result.set(-Number(tid), { kind: `  thread ${type} ${extra} ${comm}`, ...times(f) });
      }
    } catch {
      // gone meanwhile
    }
  }
  return result;
}
