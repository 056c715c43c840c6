import { writeFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';
import { startMirror } from '../../tests/support/mirror-server';
import { CHROMIUM, chromiumArgs, makeProfile } from '../../tests/e2e/support/chromium';
import { waitForFile } from '../../tests/e2e/support/files';
const MiB = 1 << 20;
const SIZE = Number(process.env.MIB ?? 256) * MiB;
const mirror = await startMirror({ size: SIZE, seed: 7, filename: 'bench.bin' });
const profile = makeProfile();
const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, userDataDir: profile.dir, args: chromiumArgs(), pipe: false, ignoreDefaultArgs: ['--disable-extensions'] });
const swTarget = await browser.waitForTarget((t) => t.type() === 'service_worker' && t.url().startsWith('chrome-extension://'));
const id = new URL(swTarget.url()).host;
const session = await swTarget.createCDPSession();
await session.send('Profiler.enable');
await session.send('Profiler.setSamplingInterval', { interval: 500 });
const page = await browser.newPage();
const cdp = await page.createCDPSession();
await cdp.send('Browser.setDownloadBehavior', { behavior: 'default', downloadPath: profile.downloads } as never);
await page.goto(`chrome-extension://${id}/popup.html`);
await session.send('Profiler.start');
const t0 = performance.now();
await page.evaluate((url) => chrome.runtime.sendMessage({ type: 'add-url', url }), mirror.url);
await waitForFile(profile.downloads, 'bench.bin', SIZE, 300_000);
console.log('seconds', (performance.now() - t0) / 1000);
const { profile: prof } = await session.send('Profiler.stop');
writeFileSync('/tmp/speedweb/sw.cpuprofile', JSON.stringify(prof));
// Self time per function, top 25.
const self = new Map<string, number>();
const dt = prof.timeDeltas ?? [];
const byId = new Map(prof.nodes.map((n: any) => [n.id, n]));
for (let i = 0; i < (prof.samples ?? []).length; i++) {
  const n: any = byId.get(prof.samples![i]);
  const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(((100 * v) / total).toFixed(1).padStart(5), '%', (v / 1e6).toFixed(2), 's', k);
await browser.close(); await mirror.close(); profile.remove();
