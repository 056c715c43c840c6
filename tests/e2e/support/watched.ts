/** Downloads Stitch leaves with the browser and watches (issue 27), in Chromium and Firefox, as a user clicks them. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mirror } from '../../support/mirror-server';
import type { Settings } from '../../../src/settings/schema';
import { request } from './chromium';
import { addonWithReachablePlayer, askBackground, changeSettingsFrom, launchFirefox, openAddonPage, showPopupIn } from './firefox';
import { browserWith, changeSettings, linkPage, MiB, mirror, onCleanup, profile } from './setup';

/** Chromium with Stitch's default settings (Always take over off) but `change`, on a page of links to `hrefs` (ids f0, f1, …). */
export async function chromiumWithDefaults(hrefs: string[], change: Partial<Settings> = {}) {
  // The link page first: cleanup closes the browser, and its open connections, before the page's server.
  const page = await linkPage(hrefs.map((href, i) => ({ id: `f${i}`, href, text: `file ${i}` })));
  const p = profile();
  const browser = await browserWith(p);
  const ui = await changeSettings(browser, change);
  const tab = await browser.context.newPage();
  await tab.goto(page);
  const list = async () => (await request(ui, { type: 'list-jobs' })).value!;
  const notices = async () => (await list()).notices.map(({ message, url }) => ({ message, url }));
  const jobs = async () => (await list()).jobs;
  return { browser, tab, downloads: p.downloads, notices, jobs };
}

/** After a click on a link to `file`: a plain download Stitch leaves with the browser (measured, then watched). */
export async function clickWatchedInChromium(file: Mirror, change: Partial<Settings> = {}) {
  const chromium = await chromiumWithDefaults([file.url], change);
  await chromium.tab.click('#f0');
  return chromium;
}

/**
 * Firefox with Stitch's default settings (Always take over off), after a click on a link to `file`: a
 * plain download it leaves with the browser, watched. `background` asks what the popup would; the
 * player's own job is its one.
 */
export async function clickWatchedInFirefox(
  file: Mirror,
  { withPopup = false, settings = {} }: { withPopup?: boolean; settings?: Partial<Settings> } = {},
) {
  const page = await linkPage([{ id: 'f', href: file.url, text: 'file' }]);
  const downloads = mkdtempSync(join(tmpdir(), 'stitch-ff-dl-'));
  onCleanup(() => rmSync(downloads, { recursive: true, force: true }));
  const browser = await launchFirefox(downloads, onCleanup, { addonDir: addonWithReachablePlayer(onCleanup) });
  // Any add-on page talks to the background as the popup does: the player is the one a test can open,
  // and WebDriver finds it again only once it plays something.
  const clip = await mirror({ size: MiB, seed: 64, contentType: 'video/webm' });
  const ui = await openAddonPage(browser, `player.html?url=${encodeURIComponent(clip.url)}`, onCleanup);
  if (withPopup) await showPopupIn(ui);
  await changeSettingsFrom(ui, settings);
  const background = askBackground(ui);
  const tab = await browser.newPage();
  await tab.goto(page);
  await tab.click('#f');
  const stitchTook = async () => {
    const { jobs, notices } = (await background({ type: 'list-jobs' })).value!;
    return { jobs: jobs.map((j) => j.url).filter((url) => url !== clip.url), notices };
  };
  return { downloads, stitchTook, ui, background, clipUrl: clip.url };
}

/** Firefox's own requests for the rest of the file after a break: `bytes=N-` (not the start probe's measuring one, from the middle). */
export const resumes = (file: Mirror, size: number) =>
  file.stats.requests.filter((r) => /^bytes=[1-9]\d*-$/.test(r.range ?? '') && r.range !== `bytes=${size / 2}-`).length;

/** The start probe's measuring requests: the second half of the file, open-ended. */
export const measuringRequests = (server: Mirror, size: number) => server.stats.requests.filter((r) => r.range === `bytes=${size / 2}-`);
