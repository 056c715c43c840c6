import type { BrowserContext } from 'playwright-core';
import type { ReplyOf, RequestOf, RequestType } from '../src/messages';
import type { Settings } from '../src/settings/schema';
import { request, serviceWorker } from '../tests/e2e/support/chromium';

/** Asks Stitch's background what its pages ask it; the reply envelope. */
export type Ask = <T extends RequestType>(message: RequestOf<T>) => Promise<{ ok: boolean; value?: ReplyOf<T>; error?: string }>;

/** Stitch's settings after `change`, as the options page would save them: the reply of set-settings. */
export async function applySettings(ask: Ask, change: (settings: Settings) => Partial<Settings>): Promise<{ ok: boolean; error?: string }> {
  const reply = await ask({ type: 'get-settings' });
  if (!reply.ok || !reply.value) return { ok: false, error: `get-settings: ${reply.error ?? 'failed'}` };
  const { settings } = reply.value;
  return ask({ type: 'set-settings', settings: { ...settings, ...change(settings) } });
}

/** The same in Chromium, from an options page of the extension in `context`, closed after. */
export async function applyChromiumSettings(
  context: BrowserContext,
  change: (settings: Settings) => Partial<Settings>,
): Promise<{ ok: boolean; error?: string }> {
  const worker = await serviceWorker(context);
  const options = await context.newPage();
  try {
    await options.goto(`chrome-extension://${new URL(worker.url()).host}/options.html`);
    return await applySettings((message) => request(options, message), change);
  } finally {
    await options.close();
  }
}
