import { createServer } from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { afterEach, expect } from 'vitest';
import { clipServed, type Clip } from '../../support/clips';
import { startMirror, type Mirror, type MirrorOptions } from '../../support/mirror-server';
import type { Settings } from '../../../src/settings/schema';
import { extensionPage, launchWithExtension, makeProfile, request, type Launched, type Profile } from './chromium';
import { startLinkPage } from './link-page';

export const MiB = 1024 * 1024;

/** Undo steps of the running test, run in reverse after it (pass or fail). */
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const undo of cleanup.splice(0).reverse()) {
    try {
      await undo();
    } catch {
      // Cleanup is best effort: one failing step must not hide the test's result or skip the rest.
    }
  }
});

export function onCleanup(undo: () => unknown): void {
  cleanup.push(undo);
}

export async function mirror(options: MirrorOptions): Promise<Mirror> {
  const m = await startMirror(options);
  onCleanup(() => m.close());
  return m;
}

/** A mirror serving `media` under its own name and type, at `rate` bytes per second (uncapped without one). */
export function clipMirror(media: Clip, rate?: number): Promise<Mirror> {
  return mirror({ ...clipServed(media), ...(rate !== undefined && { rate }) });
}

export async function linkPage(links: { id: string; href: string; text: string }[]): Promise<string> {
  const page = await startLinkPage(links);
  onCleanup(() => page.close());
  return page.url;
}

export function profile(): Profile {
  const p = makeProfile();
  onCleanup(() => p.remove());
  return p;
}

export async function browserWith(p: Profile, language?: string): Promise<Launched> {
  const launched = await launchWithExtension(p, language);
  onCleanup(() => launched.close());
  return launched;
}

/** Changes settings as the options page would; returns the extension page it asked from, to ask the background more. */
export async function changeSettings(browser: Launched, change: Partial<Settings>): Promise<Page> {
  const ui = await extensionPage(browser, 'offscreen/offscreen.html');
  const { settings } = (await request(ui, { type: 'get-settings' })).value!;
  expect((await request(ui, { type: 'set-settings', settings: { ...settings, ...change } })).ok).toBe(true);
  return ui;
}

/**
 * Sets _Always take over_ on, as the options page would, for a test about Stitch's own handling of a download it
 * takes over: by default a plain download from a loopback server is measured at the start and, unless the server
 * caps each connection, left with the browser, watched (issue 27).
 */
export function alwaysTakeOver(browser: Launched): Promise<Page> {
  return changeSettings(browser, { alwaysTakeOver: true });
}

/** Presses the popup's "leave the next download to the browser", then opens `pageUrl` in a new tab for a link click. */
export async function bypassNext(browser: Launched, popup: Page, pageUrl: string): Promise<{ bypass: Locator; tab: Page }> {
  const bypass = popup.getByTestId('bypass-next');
  await bypass.click();
  await expect.poll(() => bypass.getAttribute('aria-pressed'), { timeout: 5_000 }).toBe('true');
  const tab = await browser.context.newPage();
  await tab.goto(pageUrl);
  return { bypass, tab };
}

/** A loopback port nothing listens on: connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}
