import type { Browser } from 'puppeteer-core';
import { EXTENSION_DIR } from './chromium';
import { installAddon, startFirefox } from './firefox-launch';
import { onCleanup } from './setup';

export { ADDON_ID, ADDON_UUID, FIREFOX } from './firefox-launch';

/** Firefox with the add-on, closed after the test. */
export async function launchFirefox(
  downloads: string,
  options: { addonDir?: string; prefs?: Record<string, unknown> } = {},
): Promise<Browser> {
  const browser = await startFirefox(downloads, options);
  onCleanup(() => browser.close());
  await installAddon(browser, options.addonDir ?? EXTENSION_DIR);
  return browser;
}

