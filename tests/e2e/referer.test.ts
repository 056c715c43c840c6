import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { extensionPage, request } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { alwaysTakeOver, browserWith, linkPage, MiB, mirror, profile } from './support/setup';

/**
 * Hotlink protection: the server answers 403 to any request without the page's Referer. fetch
 * from the extension's worker drops a cross-origin referrer, so Stitch sets it with a
 * declarativeNetRequest session rule; without it the take-over probe would get 403 and leave the
 * download to the browser.
 */
test('a download from a server that requires the page as Referer is taken over and saved exactly', async () => {
  const size = 24 * MiB;
  const seed = 53;
  // The page is on another site (localhost) than the file (127.0.0.1), under a path of its own.
  const pageReferer = /^http:\/\/localhost:\d+\//;
  const server = await mirror({
    size,
    seed,
    filename: 'protected.bin',
    rate: 12 * MiB,
    faults: { resetAfterMs: 1000 },
    requireReferer: pageReferer,
  });
  const page = new URL('downloads/page.html', await linkPage([{ id: 'file', href: server.url, text: 'protected file' }]));
  page.hostname = 'localhost'; // the link page answers any path, on any name of the loopback
  const p = profile();
  const browser = await browserWith(p);
  await alwaysTakeOver(browser);

  const tab = await browser.context.newPage();
  await tab.goto(page.href);
  await tab.click('#file');

  const saved = await waitForFile(p.downloads, 'protected.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));

  const log = server.stats.requests;
  // The browser's own request, Stitch's probe and its ranged requests all carried the page's Referer.
  expect(log.filter((r) => r.status === 403)).toEqual([]);
  expect(log.filter((r) => r.range === undefined)).toHaveLength(1); // the browser's
  expect(log.some((r) => r.range === 'bytes=0-0')).toBe(true);
  expect(log.filter((r) => r.range && r.range !== 'bytes=0-0').length).toBeGreaterThanOrEqual(2); // resumed after resets
  // Exactly what the browser sent (the page's origin, as the default referrer policy has it).
  expect(log[0]).toMatchObject({ range: undefined, referer: `${page.origin}/` });
  for (const r of log) expect(r.referer, r.range ?? 'the browser').toBe(`${page.origin}/`);

  const ui = await extensionPage(browser, 'offscreen/offscreen.html');
  const jobs = await until(
    'the job to be saved',
    async () => {
      const reply = await request(ui, { type: 'list-jobs' });
      return reply.value?.jobs[0]?.state === 'saved' ? reply.value.jobs : undefined;
    },
    10_000,
  );
  expect(jobs).toHaveLength(1);
  expect(jobs[0]).toMatchObject({ filename: 'protected.bin', size, url: server.url });
  // The job is done: its rules are gone (the Referer, and the allowance of its local address); the
  // rules that stop Stitch's requests to local addresses stay.
  const sessionRules = () =>
    ui.evaluate(() =>
      (
        chrome as unknown as { declarativeNetRequest: { getSessionRules(): Promise<{ action: { type: string } }[]> } }
      ).declarativeNetRequest.getSessionRules(),
    );
  await until('only the block rules left', async () => (await sessionRules()).every((rule) => rule.action.type === 'block'), 10_000);
});
