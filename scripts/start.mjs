#!/usr/bin/env node
// `npm start`: builds the extension and opens Chromium with Stitch loaded and a local demo page
// (served on 127.0.0.1) whose links exercise it: a large file from a server that caps each
// connection, one from a server that resets every second, and two mirrors of one file. Headed
// when a display exists; otherwise it prints what to do. Ctrl-C stops the servers and the browser.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const extension = join(root, 'dist/extension');
const chromium = process.env.STITCH_CHROMIUM ?? '/usr/bin/chromium';

if (!process.env.STITCH_CHROMIUM) execFileSync('bash', ['scripts/install-system-deps.sh', 'start'], { cwd: root, stdio: 'inherit' });
execFileSync('npm', ['run', 'build:ext'], { cwd: root, stdio: 'inherit' });
if (!existsSync(chromium)) {
  console.error(`No Chromium at ${chromium}: run scripts/install-system-deps.sh (or set STITCH_CHROMIUM).`);
  process.exit(1);
}

// The mirror test server is TypeScript; Vite's SSR loader runs it without a build step.
const { createServer: createVite } = await import('vite');
const vite = await createVite({ root, server: { middlewareMode: true }, appType: 'custom', logLevel: 'error' });
const { startMirror } = await vite.ssrLoadModule('/tests/support/mirror-server.ts');
const MiB = 1024 * 1024;
const large = await startMirror({ size: 512 * MiB, seed: 1, filename: 'large-demo.bin', connectionRate: 10 * MiB });
const flaky = await startMirror({
  size: 64 * MiB,
  seed: 2,
  filename: 'resetting-server.bin',
  rate: 8 * MiB,
  faults: { resetAfterMs: 1000 },
});
const mirrorA = await startMirror({ size: 128 * MiB, seed: 3, filename: 'mirrored.bin', rate: 6 * MiB });
const mirrorB = await startMirror({ size: 128 * MiB, seed: 3, filename: 'mirrored.bin', rate: 6 * MiB });

const page = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><meta charset="utf-8"><title>Try Stitch</title>
<style>body{font:16px system-ui;max-width:44rem;margin:2rem auto;line-height:1.5}code{background:#eee;padding:0 .3em}</style>
<h1>Try Stitch</h1>
<p>Click a link: the browser starts the download. Stitch takes it over (files of 20 MB and more) when that
makes it faster or safer, and saves it to your download folder; otherwise it leaves it with the browser and
watches it. Open Stitch's toolbar popup to see both, pause and resume.</p>
<ul>
<li><a href="${large.url}">A large file</a> (512 MiB, 10 MiB/s per connection) — Stitch measures for a second or
two, then takes it over with several connections</li>
<li><a href="${flaky.url}">A server that resets the connection every second</a> (64 MiB) — the download stays with
the browser, and Stitch resumes it each time, or takes it over when the browser gives up</li>
<li><a href="${mirrorA.url}">A file with a second mirror</a> (128 MiB, 6 MiB/s per server). In Stitch's options add a
mirror rule: pattern <code>127.0.0.1:${mirrorA.port}/</code>, mirror <code>${mirrorB.origin}/</code>, then click again.</li>
</ul>`);
});
await new Promise((r) => page.listen(0, '127.0.0.1', r));
const pageUrl = `http://127.0.0.1:${page.address().port}/`;

const stop = async () => {
  await Promise.all([large, flaky, mirrorA, mirrorB].map((m) => m.close()));
  page.close();
  await vite.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

const hasDisplay = Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const profile = mkdtempSync(join(tmpdir(), 'stitch-start-'));
const args = [
  `--user-data-dir=${profile}`,
  '--no-first-run',
  '--disable-sync',
  `--disable-extensions-except=${extension}`,
  `--load-extension=${extension}`,
  pageUrl,
];
if (hasDisplay) {
  console.log(`Opening Chromium with Stitch on ${pageUrl} (profile ${profile}). Ctrl-C to stop.`);
  const browser = spawn(chromium, args, { stdio: 'ignore' });
  browser.on('exit', stop);
} else {
  console.log(`No display found, so no browser was opened. The demo page is served at ${pageUrl}
To try Stitch:
  • on a machine with a display:  ${chromium} ${args.join(' ')}
  • or load ${extension} by hand: chrome://extensions → Developer mode → Load unpacked
    (Firefox: about:debugging → This Firefox → Load Temporary Add-on → ${join(extension, 'manifest.json')})
Ctrl-C stops the servers.`);
}
