/**
 * Debian's firefox-esr driven by puppeteer-core over WebDriver BiDi (Playwright cannot drive
 * it), with an add-on installed temporarily under a fixed UUID, so its pages have a known
 * moz-extension:// origin, and downloads saved to a given folder without asking.
 */
import puppeteer, { type Browser } from 'puppeteer-core';
import { EXTENSION_DIR } from './chromium';

export const FIREFOX = process.env.STITCH_FIREFOX ?? '/usr/bin/firefox-esr';
export const ADDON_ID = 'stitch@stitch.invalid';
export const ADDON_UUID = '5e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';

/** Firefox without the add-on and without test cleanup (the benchmark closes it itself). */
export function startFirefox(downloads: string, options: { prefs?: Record<string, unknown> } = {}): Promise<Browser> {
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: true,
    // Without it, puppeteer's BiDi session makes Firefox copy every response's body on its main thread
    // (DevTools' NetworkResponseListener): the browser's own 1 GiB download took 5.56 s instead of 2.87
    // (bench:browser case d, medians of 3, 2026-11-28), which no user's Firefox does. No test reads
    // network events.
    networkEnabled: false,
    extraPrefsFirefox: {
      'extensions.webextensions.uuids': JSON.stringify({ [ADDON_ID]: ADDON_UUID }),
      'browser.download.dir': downloads,
      'browser.download.folderList': 2,
      'browser.download.useDownloadDir': true,
      'browser.download.always_ask_before_handling_new_types': false,
      'browser.download.start_downloads_in_tmp_dir': false,
      ...options.prefs,
    },
  });
}

export async function installAddon(browser: Browser, addonDir = EXTENSION_DIR): Promise<void> {
  await browser.installExtension(addonDir);
  // The event page registers its listeners at start-up.
  await new Promise((r) => setTimeout(r, 1000));
}
