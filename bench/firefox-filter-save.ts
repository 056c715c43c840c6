/**
 * A measured prototype for issue 13, not product code: can Firefox save a file while Stitch still
 * downloads it? Firefox MV3 keeps blocking webRequest and `filterResponseData`. This installs a
 * minimal add-on that replaces a download's body with bytes it fetches itself (a second request,
 * as the engine would) and times link click to file. Modes (`?mode=` on the link):
 *   alone            Firefox's own download, no filter (the reference)
 *   suspend, drop    a filter on the link's own response: fails ("Invalid request ID") once it
 *                    becomes a download
 *   api-suspend      the link is cancelled; the add-on calls downloads.download of the same URL
 *                    and filters that request: suspend the browser's bytes, write its own
 *   api-drop         the same, reading and dropping the browser's bytes instead (double traffic)
 *   plain            api-suspend without Content-Disposition
 *   api-stall        api-suspend with a pause of STALL_MS (default 45 s) half-way
 *   api-error        disconnect half-way (what happens when the filter goes away)
 *   api-reload       runtime.reload() half-way (the background restarting)
 *   api-cancel       downloads.cancel half-way
 *   api-range-*      the browser's request asks for `Range: bytes=0-0`; its one byte passes
 *                    through and the add-on writes from byte 1
 * Env: BATCH (bytes to gather per filter.write, 0: each fetch chunk), STALL_MS, HOOK (the
 * webRequest event that makes the filter; default onBeforeRequest).
 *
 *   npx tsx bench/firefox-filter-save.ts [--size-mib 1024] [--runs 1] [--modes alone,api-suspend,plain,api-stall,api-error]
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { contentSha256 } from '../tests/support/content';
import { startMirror } from '../tests/support/mirror-server';
import { startLinkPage } from '../tests/e2e/support/link-page';
import { fileSha256, waitForFile } from '../tests/e2e/support/files';
import { ADDON_ID, installAddon, startFirefox } from '../tests/e2e/support/firefox-launch';

const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    runs: { type: 'string', default: '1' },
    modes: { type: 'string', default: 'alone,api-suspend,plain,api-stall,api-error' },
  },
});
const SIZE = Number(args['size-mib']) * 1024 * 1024;
const SEED = 5;

/** The add-on: mode comes from the URL's ?mode=; the report is POSTed to the report server. */
const BACKGROUND = `const STALL_MS = ${Number(process.env.STALL_MS ?? 45000)};
browser.webRequest.onBeforeSendHeaders.addListener((d) => void fetch(REPORT, { method: 'POST', body: JSON.stringify({ type: d.type, originUrl: d.originUrl, documentUrl: d.documentUrl, headers: d.requestHeaders }) }), { urls: ['http://127.0.0.1/file.bin*'] }, ['requestHeaders']);
const BATCH = ${Number(process.env.BATCH ?? 0)};
browser.permissions.getAll().then((p) => fetch(REPORT, { method: 'POST', body: JSON.stringify({ permissions: p }) }));
const HOOK = '${process.env.HOOK ?? 'onBeforeRequest'}';
browser.webRequest[HOOK].addListener((d) => {
  const url = new URL(d.url);
  let mode = url.searchParams.get('mode');
  if (!mode || mode === 'alone') return;
  if (mode.startsWith('api-')) {
    // Stitch's own download of the same URL, filtered from its first request.
    const ranged = mode.startsWith('api-range');
    browser.downloads.download({ url: url.href.replace('mode=api-', 'mode='), filename: 'probe.bin', ...(ranged && { headers: [{ name: 'Range', value: 'bytes=0-0' }] }) }).catch((e) => fetch(url.searchParams.get('report'), { method: 'POST', body: JSON.stringify({ downloadError: String(e) }) }));
    return { cancel: true };
  }
  const report = url.searchParams.get('report');
  const filter = browser.webRequest.filterResponseData(d.requestId);
  const t0 = performance.now();
  let dropped = 0, written = 0, firstWrite = 0;
  const send = (extra) => fetch(report, { method: 'POST', body: JSON.stringify({ mode, dropped, written, writeMs: performance.now() - firstWrite, sinceHeadersMs: performance.now() - t0, ...extra }) });
  const range = mode.startsWith('range');
  if (range) mode = mode.slice('range-'.length);
  filter.ondata = (e) => { dropped += e.data.byteLength; if (range) { filter.write(e.data); written += e.data.byteLength; } };
  filter.onerror = () => void send({ filterError: filter.error });
  filter.onstart = async () => {
    if (mode !== 'drop' && !range) filter.suspend();
    try {
      const own = url.href.replace('mode=', 'own=');
      const response = await fetch(own, { headers: { Range: range ? 'bytes=1-' : 'bytes=0-' } });
      const reader = response.body.getReader();
      firstWrite = performance.now();
      let batch = [], batched = 0;
      const flush = () => { if (!batched) return; const out = new Uint8Array(batched); let at = 0; for (const b of batch) { out.set(b, at); at += b.byteLength; } filter.write(out); batch = []; batched = 0; };
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (mode === 'stall' && written < ${SIZE / 2} && written + value.byteLength >= ${SIZE / 2}) await new Promise((r) => setTimeout(r, STALL_MS));
        if (mode === 'reload' && written + value.byteLength >= ${SIZE / 2}) { await send({ reloading: true }); browser.runtime.reload(); return; }
        if (mode === 'cancel' && written + value.byteLength >= ${SIZE / 2}) { reader.cancel(); const [item] = await browser.downloads.search({ state: 'in_progress' }); await browser.downloads.cancel(item.id); await send({ cancelled: item.id }); return; }
        if (mode === 'error' && written + value.byteLength >= ${SIZE / 2}) { reader.cancel(); filter.error = 'Stitch: wrong bytes'; filter.disconnect?.(); await send({ errored: true }); return; }
        if (BATCH === 0) filter.write(value);
        else { batch.push(value); batched += value.byteLength; if (batched >= BATCH) { flush(); } }
        written += value.byteLength;
      }
      flush();
      filter.close();
      await send({});
    } catch (e) { await send({ exception: String(e) }); }
  };
}, { urls: ['http://127.0.0.1/*'], types: ['main_frame', 'sub_frame', 'other', 'xmlhttprequest'] }, ['blocking']);
`;

const addon = mkdtempSync(join(tmpdir(), 'stitch-ff-filter-'));
writeFileSync(
  join(addon, 'manifest.json'),
  JSON.stringify({
    manifest_version: 3,
    name: 'filter-save probe',
    version: '0.0.1',
    background: { scripts: ['background.js'] },
    permissions: ['webRequest', 'webRequestBlocking', 'webRequestFilterResponse', 'downloads'],
    host_permissions: ['http://*/*'],
    browser_specific_settings: { gecko: { id: ADDON_ID } },
  }),
);

const reports: unknown[] = [];
const reportServer = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    reports.push(JSON.parse(body));
    res.end();
  });
});
await new Promise<void>((r) => reportServer.listen(0, '127.0.0.1', r));
const reportUrl = `http://127.0.0.1:${(reportServer.address() as AddressInfo).port}/report`;
writeFileSync(join(addon, 'background.js'), `const REPORT = '${reportUrl}';\n` + BACKGROUND);
const expected = await contentSha256(SEED, SIZE);

for (let run = 0; run < Number(args.runs); run++) {
  for (const mode of args.modes.split(',')) {
    const plain = mode === 'plain';
    const inline = mode === 'inline';
    const mirror = await startMirror({
      size: SIZE,
      seed: SEED,
      ...(plain || inline ? {} : { filename: 'probe.bin' }),
      ...(inline && { contentType: 'text/plain' }),
    });
    const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-filter-dl-'));
    const browser = await startFirefox(downloads);
    try {
      await installAddon(browser, addon);
      const href = `${mirror.url}?mode=${plain ? 'api-suspend' : mode}&report=${encodeURIComponent(reportUrl)}`;
      const page = await startLinkPage([{ id: 'f', href, text: 'file' }]);
      const tab = await browser.newPage();
      await tab.goto(page.url);
      console.log('startup', JSON.stringify(reports));
      reports.length = 0;
      const t0 = performance.now();
      await tab.click('#f');
      const sizes: string[] = [];
      const monitor = setInterval(
        () =>
          sizes.push(
            readdirSync(downloads)
              .map((f) => `${f}:${statSync(join(downloads, f)).size >> 20}`)
              .join('+'),
          ),
        1000,
      );
      let line = `${mode}: `;
      try {
        const name = plain ? 'file.bin' : 'probe.bin';
        const saved = await waitForFile(
          downloads,
          name,
          SIZE,
          mode === 'api-error' || mode === 'api-reload' || mode === 'api-cancel' ? 30_000 : 180_000,
        );
        const s = (performance.now() - t0) / 1000;
        const exact = (await fileSha256(saved)) === expected;
        line += `${s.toFixed(2)} s, ${((SIZE / s) * 1e-6).toFixed(0)} MB/s, ${exact ? 'exact' : 'WRONG'}`;
      } catch (error) {
        line += `no file (${String(error).slice(0, 80)}); folder: ${JSON.stringify(readdirSync(downloads).map((f) => `${f}:${statSync(join(downloads, f)).size}`))}`;
      }
      await new Promise((r) => setTimeout(r, 500));
      const perRequest = mirror.stats.requests.map(
        (r) => `${r.range ?? 'browser'}:${(r.bytesSent / 2 ** 20).toFixed(1)}MiB${r.aborted ? '(cut)' : ''}`,
      );
      console.log(line, '| server:', perRequest.join(' '), '| addon:', JSON.stringify(reports));
      clearInterval(monitor);
      console.log('folder each second:', sizes.join(' '));
      await page.close();
    } finally {
      await browser.close();
      await mirror.close();
      rmSync(downloads, { recursive: true, force: true });
    }
  }
}
reportServer.close();
rmSync(addon, { recursive: true, force: true });
