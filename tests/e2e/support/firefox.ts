/**
 * Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi (Playwright cannot drive
 * it), with an add-on installed temporarily under a fixed UUID, so its pages have a known
 * moz-extension:// origin, and downloads saved to a given folder without asking. The helpers
 * take the step that undoes what they set up (`onCleanup` in tests), so the playback
 * benchmark uses them outside vitest.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import type { ReplyOf, RequestOf, RequestType } from '../../../src/messages';
import type { Settings } from '../../../src/settings/schema';
import { EXTENSION_DIR } from './chromium';
import { until } from './files';
import { ADDON_UUID, installAddon, startFirefox } from './firefox-launch';
import { closeServer } from './link-page';

export { ADDON_ID, ADDON_UUID, FIREFOX } from './firefox-launch';

/** Registers a step run after the test (or benchmark run), pass or fail. */
export type Cleanup = (undo: () => unknown) => void;

export async function launchFirefox(
  downloads: string,
  cleanup: Cleanup,
  options: { addonDir?: string; prefs?: Record<string, unknown> } = {},
): Promise<Browser> {
  const browser = await startFirefox(downloads, options);
  cleanup(() => browser.close());
  await installAddon(browser, options.addonDir ?? EXTENSION_DIR);
  return browser;
}

/**
 * A copy of the built add-on whose player page is web-accessible: Firefox refuses to navigate
 * to moz-extension:// from WebDriver or from a page's script, but follows a loopback server's
 * redirect to a web-accessible page. Test-only: the product's player is not web-accessible.
 * `otherPages` (e.g. popup.html) are made reachable the same way.
 */
export function addonWithReachablePlayer(cleanup: Cleanup, otherPages: readonly string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'stitch-ff-addon-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(EXTENSION_DIR, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest.web_accessible_resources = [{ resources: ['player.html', ...otherPages], matches: ['http://127.0.0.1/*'] }];
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

/**
 * A copy of the built add-on with an empty page of the test's own, reachable from the loopback
 * (Firefox opens add-on pages only through a redirect): from it the test talks to the background
 * as Stitch's pages do. The page moves within itself once loaded, which makes WebDriver find it
 * again after Firefox moved the tab to the add-on's process (see openAddonPage).
 */
export function addonWithTestPage(cleanup: Cleanup): string {
  const dir = mkdtempSync(join(tmpdir(), 'stitch-ff-addon-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(EXTENSION_DIR, dir, { recursive: true });
  writeFileSync(
    join(dir, 'test-page.html'),
    '<!doctype html><meta charset="utf-8"><title>test</title><script src="test-page.js"></script>',
  );
  writeFileSync(join(dir, 'test-page.js'), "history.replaceState(null, '', '?ready');");
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest.web_accessible_resources = [{ resources: ['test-page.html'], matches: ['http://127.0.0.1/*'] }];
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return dir;
}

/** A loopback URL that redirects to `target`. */
async function redirectTo(target: string, cleanup: Cleanup): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(302, { Location: target });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup(() => closeServer(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/**
 * Opens an add-on page through a loopback redirect. Firefox moves the tab to the add-on's
 * process on the way and WebDriver may lose the frame it navigated ("Frame detached"); the
 * page shows up again among the browser's pages once it navigates within itself (the player
 * replaces ?url= with ?id= when it has its job).
 */
export async function openAddonPage(browser: Browser, path: string, cleanup: Cleanup): Promise<Page> {
  const target = `moz-extension://${ADDON_UUID}/${path}`;
  const tab = await browser.newPage();
  void tab.goto(await redirectTo(target, cleanup)).catch(() => {});
  return until(
    `the add-on page ${path}`,
    async () => [tab, ...(await browser.pages())].find((p) => p.url().startsWith(`moz-extension://${ADDON_UUID}/${path.split('?')[0]}`)),
    20_000,
  );
}

/** Shows the popup in a frame of an add-on page (the same origin), as it would render in its own window. */
export async function showPopupIn(page: Page): Promise<void> {
  await page.evaluate(() => {
    const frame = document.createElement('iframe');
    frame.id = 'popup';
    frame.src = 'popup.html';
    frame.style.cssText = 'width:400px;height:600px';
    document.body.append(frame);
  });
}

/** Sends requests to the background from an add-on page, as the popup sends them; the reply envelope. */
export function askBackground(page: Page) {
  return <T extends RequestType>(message: RequestOf<T>) =>
    page.evaluate(
      (m) =>
        (globalThis as unknown as { browser: { runtime: { sendMessage(m: unknown): Promise<unknown> } } }).browser.runtime.sendMessage(m),
      message,
    ) as Promise<{ ok: boolean; value?: ReplyOf<T> }>;
}

/** Changes settings as the options page would, from an add-on page (see openAddonPage); throws if Stitch refuses them. */
export async function changeSettingsFrom(page: Page, change: Partial<Settings>): Promise<void> {
  const background = askBackground(page);
  const { settings } = (await background({ type: 'get-settings' })).value!;
  const saved = await background({ type: 'set-settings', settings: { ...settings, ...change } });
  if (!saved.ok) throw new Error(`Stitch refused the settings ${JSON.stringify(change)}`);
}
