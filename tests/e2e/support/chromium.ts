/**
 * Launches Debian's Chromium with the built extension, headless, through Playwright (CDP), with
 * a real download folder: Playwright's own download handling is switched back to the browser's
 * default so files land under their real names.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page, type Worker } from 'playwright-core';
import type { ReplyOf, RequestOf, RequestType } from '../../../src/messages';

export const CHROMIUM = process.env.STITCH_CHROMIUM ?? '/usr/bin/chromium';
export const EXTENSION_DIR = resolve(import.meta.dirname, '../../../dist/extension');

/** The launch flags docs/platform.md lists for loading an unpacked extension headless. */
export function chromiumArgs(extensionDir = EXTENSION_DIR): string[] {
  return [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    `--disable-extensions-except=${extensionDir}`,
    `--load-extension=${extensionDir}`,
  ];
}

export interface Profile {
  dir: string;
  downloads: string;
  remove(): void;
}

/** A fresh profile whose download folder is `downloads`, never asking where to save. */
export function makeProfile(): Profile {
  const dir = mkdtempSync(join(tmpdir(), 'stitch-e2e-'));
  const downloads = join(dir, 'downloads');
  mkdirSync(join(dir, 'Default'), { recursive: true });
  mkdirSync(downloads);
  const prefs = {
    download: { default_directory: downloads, prompt_for_download: false, directory_upgrade: true },
    savefile: { default_directory: downloads },
  };
  writeFileSync(join(dir, 'Default', 'Preferences'), JSON.stringify(prefs));
  // Retries: a browser's helper processes may still write into the profile for a moment after it exits.
  return { dir, downloads, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

export interface Launched {
  context: BrowserContext;
  worker: Worker;
  extensionId: string;
  close(): Promise<void>;
}

/**
 * `language`: the browser's UI language (Chromium on Linux takes it from LANGUAGE), e.g. 'de'.
 * `extraArgs`: more command-line flags (e.g. `--host-resolver-rules`); `env`: more of the browser's environment (e.g. `LANG`).
 */
export async function launchWithExtension(
  profile: Profile,
  language?: string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<Launched> {
  const context = await chromium.launchPersistentContext(profile.dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...chromiumArgs(), ...(language ? [`--lang=${language}`] : []), ...extraArgs],
    env: { ...process.env, ...(language && { LANGUAGE: language }), ...env },
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const cdp = await context.newCDPSession(page);
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'default' } as never);
  const worker = await serviceWorker(context);
  // The worker is seen as soon as it is registered, maybe before its script ran. On a fresh profile Chrome
  // delivers an event only to listeners the script has added: a download clicked before that is never told to
  // Stitch (seen on CI, and here when Chromium started fast). An evaluation runs once the script's first task,
  // which adds every listener, is done.
  await worker.evaluate(() => true);
  const extensionId = new URL(worker.url()).host;
  return { context, worker, extensionId, close: () => context.close() };
}

export async function serviceWorker(context: BrowserContext, timeoutMs = 10_000): Promise<Worker> {
  const existing = context.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://'));
  return existing ?? (await context.waitForEvent('serviceworker', { timeout: timeoutMs }));
}

/** An extension page, to talk to the background as the popup does. */
export async function extensionPage(launched: Launched, path: string): Promise<Page> {
  const page = await launched.context.newPage();
  await page.goto(`chrome-extension://${launched.extensionId}/${path}`);
  return page;
}

/** Sends one protocol request from an extension page and returns the reply envelope. */
export async function request<T extends RequestType>(
  page: Page,
  message: RequestOf<T>,
): Promise<{ ok: boolean; value?: ReplyOf<T>; error?: string }> {
  return page.evaluate((m) => chrome.runtime.sendMessage(m) as Promise<never>, message);
}

/**
 * Waits until the extension's service worker is active, so the next extension page is
 * controlled from its start (else the player reloads itself once to be, which resets its clock).
 */
export async function streamRouteReady(launched: Launched): Promise<void> {
  const page = await extensionPage(launched, 'popup.html');
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  await page.close();
}
