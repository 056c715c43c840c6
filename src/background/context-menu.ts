import type { BrowserApi, MenuClick } from './browser-api';
import type { NewDownload } from './job-manager';

export const MENU_ID = 'stitch-download';

/** Creates "Download with Stitch" on links and media (again on each start: it is idempotent). */
export function createContextMenu(api: BrowserApi): Promise<void> {
  return api.menus.createOnce({ id: MENU_ID, title: 'Download with Stitch', contexts: ['link', 'video', 'audio'] });
}

/** The download a click on the menu asks for, or undefined when it is not ours or has no URL. */
export function downloadFromClick(click: MenuClick, mirrorsFor: (url: string) => string[]): NewDownload | undefined {
  if (click.menuItemId !== MENU_ID) return undefined;
  const url = click.linkUrl ?? click.srcUrl;
  if (!url || !/^https?:/i.test(url)) return undefined;
  return { url, referrer: click.pageUrl, mirrors: mirrorsFor(url) };
}
