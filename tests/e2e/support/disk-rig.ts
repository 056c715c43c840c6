/**
 * Issue 48's end-to-end rig: Chromium or Firefox ESR with Stitch, its profile and its download folder on one
 * small disk (small-disk.ts), a page of links to click, and what a person sees: the popup's words (the
 * page-wide notices, each row's state and error), list-jobs, the browser's own downloads. The lowest free
 * space is sampled with statfs every 100 ms.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page as PwPage } from 'playwright-core';
import type { Page as PpPage } from 'puppeteer-core';
import type { JobView, UiNotice } from '../../../src/messages';
import type { Settings } from '../../../src/settings/schema';
import { extensionPage, request } from './chromium';
import { addonWithTestPage, askBackground, changeSettingsFrom, launchFirefox, openAddonPage, showPopupIn } from './firefox';
import { browserWith, changeSettings, linkPage, onCleanup, profile } from './setup';
import { smallDisk, type SmallDisk } from './small-disk';

/** The browser's downloads API, as much of it as the tests use. */
interface Downloads {
  search(q: object): Promise<BrowserItem[]>;
  resume(id: number): Promise<void>;
}

export type BrowserName = 'chromium' | 'firefox';

/** The browser's own record of a download, as chrome.downloads / browser.downloads tell it. */
export interface BrowserItem {
  id: number;
  filename: string;
  state: string;
  error?: string;
  bytesReceived: number;
  totalBytes: number;
  canResume?: boolean;
  paused?: boolean;
  exists?: boolean;
}

/** What the popup shows, as text. */
export interface PopupWords {
  notices: string[];
  rows: { name: string; state: string | undefined; words: string; error: string }[];
  watched: { name: string; state: string }[];
}

export interface Rig {
  browser: BrowserName;
  disk: SmallDisk;
  downloads: string;
  /** Clicks the link (opened in a tab of its own, as a user would). */
  click(): Promise<void>;
  list(): Promise<{ jobs: JobView[]; notices: UiNotice[] }>;
  popup(): Promise<PopupWords>;
  items(): Promise<BrowserItem[]>;
  /** Resumes the browser's own download, as its downloads page would. */
  resumeItem(id: number): Promise<void>;
  jobAction(id: string, action: 'resume' | 'pause' | 'retry'): Promise<boolean>;
}

/** Reads the popup's words from `doc` (the popup page, or the popup's frame in Firefox). Serialized into the page. */
function readPopup(inFrame: boolean): PopupWords {
  const doc = inFrame ? document.querySelector<HTMLIFrameElement>('#popup')!.contentDocument! : document;
  const text = (root: ParentNode, id: string) => root.querySelector(`[data-testid="${id}"]`)?.textContent?.trim() ?? '';
  return {
    notices: [...doc.querySelectorAll('[data-testid="notice"]')].map((e) => e.textContent?.trim() ?? ''),
    rows: [...doc.querySelectorAll<HTMLElement>('[data-testid="job-row"]')].map((row) => ({
      name: text(row, 'job-filename'),
      state: row.dataset.state,
      words: text(row, 'job-state'),
      error: text(row, 'job-error'),
    })),
    watched: [...doc.querySelectorAll<HTMLElement>('[data-testid="watched-row"]')].map((row) => ({
      name: text(row, 'watched-name'),
      state: text(row, 'watched-state'),
    })),
  };
}

/**
 * A browser with Stitch on a fresh small disk of `diskBytes`, the settings changed by `change`, a tab on a page
 * linking to `href`. Register the mirror before calling (cleanup runs in reverse: the browser closes first).
 */
export async function rigOn(browser: BrowserName, diskBytes: number, href: string, change: Partial<Settings>): Promise<Rig> {
  const disk = smallDisk(diskBytes, onCleanup);
  const page = await linkPage([{ id: 'f', href, text: 'the file' }]);
  return browser === 'chromium' ? chromiumRig(disk, page, change) : firefoxRig(disk, page, change);
}

async function chromiumRig(disk: SmallDisk, pageUrl: string, change: Partial<Settings>): Promise<Rig> {
  const p = disk.onDisk(() => profile());
  const launched = await disk.onDisk(() => browserWith(p));
  const ui = await changeSettings(launched, change);
  const popup = await extensionPage(launched, 'popup.html');
  let tab: PwPage | undefined;
  return {
    browser: 'chromium',
    disk,
    downloads: p.downloads,
    click: async () => {
      tab = await launched.context.newPage();
      await tab.goto(pageUrl);
      await tab.click('#f');
    },
    list: async () => (await request(ui, { type: 'list-jobs' })).value!,
    popup: () => popup.evaluate(readPopup, false),
    items: () => ui.evaluate(() => (globalThis as unknown as { chrome: { downloads: Downloads } }).chrome.downloads.search({})),
    resumeItem: (id) => ui.evaluate((i) => (globalThis as unknown as { chrome: { downloads: Downloads } }).chrome.downloads.resume(i), id),
    jobAction: async (id, action) => (await request(ui, { type: 'job-action', id, action })).ok,
  };
}

async function firefoxRig(disk: SmallDisk, pageUrl: string, change: Partial<Settings>): Promise<Rig> {
  // The add-on's copy stays off the small disk; the profile (puppeteer's, in the temp folder) and the downloads go on it.
  const addonDir = addonWithTestPage(onCleanup);
  const downloads = join(disk.dir, 'downloads');
  mkdirSync(downloads);
  const browser = await disk.onDisk(() => launchFirefox(downloads, onCleanup, { addonDir }));
  const ui: PpPage = await openAddonPage(browser, 'test-page.html', onCleanup);
  await showPopupIn(ui);
  await changeSettingsFrom(ui, change);
  const background = askBackground(ui);
  return {
    browser: 'firefox',
    disk,
    downloads,
    click: async () => {
      const tab = await browser.newPage();
      await tab.goto(pageUrl);
      await tab.click('#f');
    },
    list: async () => (await background({ type: 'list-jobs' })).value!,
    popup: () => ui.evaluate(readPopup, true),
    items: () => ui.evaluate(() => (globalThis as unknown as { browser: { downloads: Downloads } }).browser.downloads.search({})),
    resumeItem: (id) =>
      ui.evaluate((i) => (globalThis as unknown as { browser: { downloads: Downloads } }).browser.downloads.resume(i), id),
    jobAction: async (id, action) => (await background({ type: 'job-action', id, action })).ok,
  };
}

/** The lowest free space of `disk` (statfs every 100 ms) from now until stopped. */
export function lowestFree(disk: SmallDisk): { lowest: () => number; stop: () => void } {
  let lowest = disk.free();
  const timer = setInterval(() => (lowest = Math.min(lowest, disk.free())), 100);
  onCleanup(() => clearInterval(timer));
  return {
    lowest: () => Math.min(lowest, disk.free()),
    stop: () => clearInterval(timer),
  };
}
