import type { BrowserApi, MenuClick } from '../browser-api';
import { playerPath } from '../../media-type';
import { t } from '../../words/i18n';
import type { NewDownload } from '../jobs/job-manager';
import type { HandoffFacts } from '../aria2/handoff';

export const MENU_ID = 'stitch-download';
export const PLAY_MENU_ID = 'stitch-play';
export const BROWSER_MENU_ID = 'stitch-browser';
export const LEAVE_SITE_MENU_ID = 'stitch-leave-site';
export const ARIA2_MENU_ID = 'stitch-aria2';
export const STREAM_MENU_ID = 'stitch-stream';

/**
 * Creates "Download with Stitch" and "Play with Stitch" on links and media (again on each
 * start: it is idempotent), "Download video with Stitch" on pages and videos (the stream the page
 * plays), and "Send to aria2" on links when an aria2 endpoint is set.
 */
export async function createContextMenu(api: BrowserApi, aria2: boolean): Promise<void> {
  const contexts = ['link', 'video', 'audio'];
  await api.menus.createOnce({ id: MENU_ID, title: t('menuDownload'), contexts });
  await api.menus.add?.({ id: PLAY_MENU_ID, title: t('menuPlay'), contexts });
  await api.menus.add?.({ id: BROWSER_MENU_ID, title: t('menuBrowser'), contexts: ['link'] });
  await api.menus.add?.({ id: STREAM_MENU_ID, title: t('menuDownloadVideo'), contexts: ['page', 'video'] });
  await api.menus.add?.({ id: LEAVE_SITE_MENU_ID, title: t('menuLeaveSite'), contexts: ['page', 'link'] });
  if (aria2) await api.menus.add?.({ id: ARIA2_MENU_ID, title: t('actionSendToAria2'), contexts: ['link'] });
}

/**
 * The link a click on "Send to aria2" hands over: http(s), and what Stitch cannot run itself but aria2
 * can (`magnet:`, `ftp:`, a `.torrent` file), each only because the user chose it.
 */
export function aria2FromClick(click: MenuClick, mirrorsFor: (url: string) => string[]): HandoffFacts | undefined {
  if (click.menuItemId !== ARIA2_MENU_ID || !click.linkUrl) return undefined;
  const url = click.linkUrl;
  if (/^https?:/i.test(url)) return { url, mirrors: mirrorsFor(url), ...(click.pageUrl ? { referrer: click.pageUrl } : {}) };
  return /^(magnet|ftp|sftp):/i.test(url) ? { url, mirrors: [] } : undefined;
}

/**
 * A click on a bypass entry: `url` for the browser to download itself (Stitch ignores its own
 * downloads), or `site`, the page's host, to leave to the browser from now on.
 */
export function browserFromClick(click: MenuClick): { url?: string; site?: string } | undefined {
  if (click.menuItemId === BROWSER_MENU_ID) return click.linkUrl && /^https?:/i.test(click.linkUrl) ? { url: click.linkUrl } : undefined;
  if (click.menuItemId !== LEAVE_SITE_MENU_ID) return undefined;
  try {
    const { hostname, protocol } = new URL(click.pageUrl ?? click.linkUrl ?? '');
    return /^https?:$/.test(protocol) && hostname ? { site: hostname } : undefined;
  } catch {
    return undefined;
  }
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

/** The tab whose video stream a click on "Download video with Stitch" asks for, or undefined. */
export function streamTabFromClick(click: MenuClick): number | undefined {
  return click.menuItemId === STREAM_MENU_ID && click.tabId !== undefined && click.tabId >= 0 ? click.tabId : undefined;
}
