import type { Runtime } from 'webextension-polyfill';
import { BackgroundError, UI_PORT, type RequestOf, type RequestType } from '../messages';
import { aria2ProblemText } from '../words/aria2-text';
import { sentence, t } from '../words/i18n';

/** What a page needs of the extension: one way to send requests, one to open the UI port. */
export interface Connection {
  send: (message: unknown) => Promise<unknown>;
  connect: () => Runtime.Port;
  openOptionsPage: () => Promise<void>;
  /** Opens a saved file; must be called inside the click handler (the browser wants a user gesture). */
  openDownload: (downloadId: number) => Promise<void>;
}

/** Said on a page opened outside the extension (a file:// preview, a test), where no API exists. */
export const NOT_CONNECTED = t('notConnected');

/**
 * The extension API, or undefined when the page runs outside an extension. The polyfill is
 * loaded lazily because it throws on import there, and the page should still render and say so.
 */
export async function connectToBackground(): Promise<Connection | undefined> {
  const chrome = (globalThis as { chrome?: { runtime?: { id?: string } } }).chrome;
  if (!chrome?.runtime?.id) return undefined;
  const { default: browser } = await import('webextension-polyfill');
  return {
    send: (message) => browser.runtime.sendMessage(message),
    connect: () => browser.runtime.connect({ name: UI_PORT }),
    openOptionsPage: () => browser.runtime.openOptionsPage(),
    openDownload: (downloadId) => browser.downloads.open(downloadId),
  };
}

/** A sentence for the user (English from the background) from anything thrown by `callBackground` or the messaging layer. */
export function errorText(error: unknown): string {
  if (error instanceof BackgroundError && error.aria2) return aria2ProblemText(error.aria2);
  const message = error instanceof Error ? error.message : String(error);
  // The browser's own words when the worker is gone are not for users.
  if (/Receiving end does not exist|Could not establish connection/i.test(message)) {
    return t('notAnswering');
  }
  return sentence(message);
}

/** A request without payload. */
export function bareRequest<T extends RequestType>(type: T): RequestOf<T> {
  return { type } as RequestOf<T>;
}
