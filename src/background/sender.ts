import type { BrowserApi } from './browser-api';

/** Who sent a message or opened a port (runtime.MessageSender: the fields Stitch checks). */
export interface Sender {
  id?: string;
  url?: string;
}

/**
 * Whether a message or port comes from one of Stitch's own pages (popup, options, player,
 * offscreen document): this extension's id and a page under its origin. Every request the
 * background answers is a page's, so nothing else (another extension, a content script, a web
 * page) may start downloads, change settings or open files through it.
 */
export function isOwnPage(sender: Sender | undefined, api: Pick<BrowserApi, 'extensionId' | 'extensionOrigin'>): boolean {
  return sender?.id === api.extensionId && typeof sender.url === 'string' && sender.url.startsWith(api.extensionOrigin);
}
