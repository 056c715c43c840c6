import { expect, test } from 'vitest';
import { DOWNLOAD_CONNECTIONS_PER_HOST } from '../../src/background/jobs/host-connections';
import { contentSha256 } from '../support/content';
import { request } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { browserWith, changeSettings, linkPage, MiB, mirror, profile } from './support/setup';

test("twelve links of one host clicked at once: every download is taken over, though Stitch's own downloads fill the host, and saved exact", async () => {
  const size = 6 * MiB;
  const seed = 71;
  // A slow server while the twelve are taken over: each of Stitch's first block requests then
  // lasts longer than a take-over may wait for its probe's answer.
  const server = await mirror({ size, seed, rate: 256 * 1024, filename: (query) => `part-${query.get('n')}.bin` });
  const links = Array.from({ length: 12 }, (_, i) => ({ id: `l${i}`, href: `${server.url}?n=${i + 1}`, text: `part ${i + 1}` }));
  // The link page first: cleanup closes the browser, and its open connections, before the page's server.
  const page = await linkPage(links);
  const p = profile();
  const browser = await browserWith(p);
  // Always take over: the subject is Stitch's own downloads filling the host, not the start probe's choice.
  const ui = await changeSettings(browser, { thresholdBytes: 4 * MiB, alwaysTakeOver: true });
  const tab = await browser.context.newPage();
  await tab.goto(page);

  // Each link opened with a middle click, one right after another: each download starts in a tab of its own (in
  // the page's tab, the next click's navigation would cancel the one not yet known to be a download).
  for (const link of links) await tab.click(`#${link.id}`, { button: 'middle' });
  const list = async () => (await request(ui, { type: 'list-jobs' })).value!;
  await until('twelve downloads taken over', async () => (await list()).jobs.length === 12, 45_000).catch(async (error: unknown) => {
    const { jobs, notices } = await list();
    throw new Error(
      `${String(error)}; jobs: ${jobs.map((j) => j.filename).join(', ')}; notices: ${notices.map((n) => n.message).join(' | ')}`,
    );
  });
  expect((await list()).notices).toEqual([]);

  server.setRate(undefined);
  const expected = await contentSha256(seed, size);
  for (const { href } of links) {
    const name = `part-${new URL(href).searchParams.get('n')}.bin`;
    expect(await fileSha256(await waitForFile(p.downloads, name, size, 60_000)), name).toBe(expected);
  }
  // Stitch's block requests (ranged, past the probes' first byte) never held more than five connections at once.
  const blocks = server.stats.requests.filter((r) => r.range !== undefined && r.range !== 'bytes=0-0');
  const openAt = (t: number) => blocks.filter((r) => r.startedAt <= t && (r.endedAt ?? Infinity) > t).length;
  expect(Math.max(...blocks.map((r) => openAt(r.startedAt)))).toBe(DOWNLOAD_CONNECTIONS_PER_HOST);
});
