import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { CHROMIUM, chromiumArgs, makeProfile } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { MiB, mirror, onCleanup } from './support/setup';

/**
 * Chrome stops an idle MV3 worker after 30 s even mid-fetch, but not while DevTools is attached,
 * so this test starts Chromium itself with no debugging at all and judges from outside: the
 * server's log must show one uninterrupted transfer lasting over 40 s (past the 30 s at which an idle worker
 * is stopped, and two of the keep-alive's 20 s ticks), and the file must be exact.
 */
test('a throttled download over 40 s completes with no debugger attached', { timeout: 240_000 }, async () => {
  const size = 21 * MiB; // over the 20 MB take-over threshold
  const seed = 60;
  const seconds = 44;
  const server = await mirror({ size, seed, filename: 'slow.bin', rate: Math.ceil(size / seconds) });

  // A page that starts the download by itself, as a page script clicking a link would.
  let pageHits = 0;
  const page = createServer((_req, res) => {
    pageHits++;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><a id="f" href="${server.url}">file</a><script>document.getElementById('f').click()</script>`);
  });
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  onCleanup(() => new Promise((r) => page.close(r)));
  const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;

  const profile = makeProfile();
  onCleanup(() => profile.remove());
  let browserLog = '';
  const launch = () => {
    const browser = spawn(
      CHROMIUM,
      [
        '--headless',
        '--enable-logging=stderr',
        // Only for opening the page if the command line's URL is not (below); no client ever attaches a debugger.
        '--remote-debugging-port=0',
        `--user-data-dir=${profile.dir}`,
        ...chromiumArgs(),
        pageUrl,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    browser.stderr.on('data', (d: Buffer) => (browserLog = (browserLog + d.toString()).slice(-4000)));
    const stop = () =>
      new Promise((done) => (browser.exitCode !== null ? done(undefined) : (browser.once('exit', done), browser.kill('SIGTERM'))));
    onCleanup(stop);
    return { browser, stop };
  };
  // What is tested is the worker's life, not Chromium's start: this Chromium (156), started this way with a
  // fresh profile, sometimes never opens the page given on its command line (0 requests in 130 s; seen in 1 of
  // 3 starts, in 3 starts in a row, and in 4 in a row on a loaded CI machine, with and without Stitch). Then the
  // page is opened through the DevTools HTTP endpoint, which creates a tab and attaches no debugger to anything;
  // failing that too, Chromium is started again, up to 4 times.
  const opened = () =>
    until('the page to be opened', () => pageHits > 0, 15_000).then(
      () => true,
      () => false,
    );
  let chrome = launch();
  for (let attempt = 1; attempt < 4 && !(await opened()); attempt++) {
    console.log(`Chromium did not open the page within 15 s (start ${attempt}); opening it through the DevTools endpoint`);
    if (await openThroughEndpoint(profile.dir, pageUrl).then(opened, () => false)) break;
    console.log('nor through the endpoint; starting Chromium again');
    await chrome.stop();
    chrome = launch();
  }

  const saved = await waitForFile(profile.downloads, 'slow.bin', size, 130_000).catch((error: unknown) => {
    const log = server.stats.requests.map(
      (r) => `${r.range ?? 'whole'} ${r.status} sent=${r.bytesSent} aborted=${r.aborted} ${r.startedAt}-${r.endedAt ?? ''}`,
    );
    const exit = chrome.browser.exitCode === null ? 'still running' : `exited with ${chrome.browser.exitCode}`;
    throw new Error(
      `${String(error)}\npage loaded ${pageHits} time(s); browser ${exit}\nserver log:\n${log.join('\n')}\nbrowser stderr:\n${browserLog}`,
    );
  });
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  const body = server.stats.requests.filter((r) => r.range !== 'bytes=0-0' && r.bytesSent > 1 * MiB);
  // Stitch's transfer (the browser's own copy, cancelled early, sent little).
  const stitch = body.at(-1)!;
  expect(stitch.aborted).toBe(false);
  expect(stitch.bytesSent).toBe(size);
  expect((stitch.endedAt! - stitch.startedAt) / 1000).toBeGreaterThan(40);
});

/** Opens `url` in a new tab through the HTTP endpoint of `--remote-debugging-port` (its port is in DevToolsActivePort). */
async function openThroughEndpoint(profileDir: string, url: string): Promise<void> {
  const port = readFileSync(join(profileDir, 'DevToolsActivePort'), 'utf8').split('\n')[0];
  const response = await fetch(`http://127.0.0.1:${port}/json/new?${url}`, { method: 'PUT' });
  if (!response.ok) throw new Error(`the DevTools endpoint answered ${response.status}`);
}
