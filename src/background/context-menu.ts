import type { BrowserApi, MenuClick } from './browser-api';
import { playerPath } from '../media-type';
import type { NewDownload } from './job-manager';

export const MENU_ID = 'stitch-download';
export const PLAY_MENU_ID = 'stitch-play';

/**
 * Creates "Download with Stitch" and "Play with Stitch" on links and media (again on each
 * start: it is idempotent).
 */
export async function createContextMenu(api: BrowserApi): Promise<void> {
  const contexts = ['link', 'video', 'audio'];
  await api.menus.createOnce({ id: MENU_ID, title: 'Download with Stitch', contexts });
  await api.menus.add?.({ id: PLAY_MENU_ID, title: 'Play with Stitch', contexts });
}

/** The player page to open for a click on "Play with Stitch", or undefined. */
export function playerFromClick(click: MenuClick): string | undefined {
  if (click.menuItemId !== PLAY_MENU_ID) return undefined;
  const url = click.srcUrl ?? click.linkUrl;
  if (!url || !/^https?:/i.test(url)) return undefined;
  return playerPath({ url });
}

/** The download a click on the menu asks for, or undefined when it is not ours or has no URL. */
export function downloadFromClick(click: MenuClick, mirrorsFor: (url: string) => string[]): NewDownload | undefined {
  if (click.menuItemId !== MENU_ID) return undefined;
  const url = click.linkUrl ?? click.srcUrl;
  if (!url || !/^https?:/i.test(url)) return undefined;
  return { url, referrer: click.pageUrl, mirrors: mirrorsFor(url) };
}
