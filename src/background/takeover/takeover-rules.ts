import { formatCount, t } from '../../words/i18n';
import type { Settings } from '../../settings/schema';
import type { BrowserDownload } from '../browser-api';
import type { JobCredentials } from '../jobs/create-job';
import type { ProbeResult } from './probe';

/** take: Stitch runs it. leave: the browser keeps it; `notice` is shown to the user (in their language), if any. */
export type Decision = { take: true } | Leave;

type Leave = { take: false; notice?: string };
const LEAVE: Leave = { take: false };

/** First look, from what the browser tells at onCreated, before any network request. */
export function firstLook(item: BrowserDownload, settings: Settings, extensionId: string, wasPosted: boolean): Leave | 'probe' {
  // Private windows: Stitch would keep the file and its URL in storage that outlives the window.
  if (!settings.takeover || item.byExtensionId === extensionId || item.incognito === true) return LEAVE;
  if (item.state !== undefined && item.state !== 'in_progress') return LEAVE;
  const url = item.finalUrl || item.url;
  const size = item.totalBytes !== undefined && item.totalBytes > 0 ? item.totalBytes : undefined;
  if (size !== undefined && size < settings.thresholdBytes) return LEAVE;
  if (isExcludedType(item.mime, settings.excludedTypes) || isExcludedSite([url, item.referrer], settings.excludedSites)) return LEAVE;
  // Extensions' own saves (Stitch's included: blob URLs, and Chrome's streamed save from its worker's route) are not ours to take.
  if (/^(blob:)?(chrome|moz)-extension:/i.test(url)) return LEAVE;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') {
    return { take: false, notice: t('noticeLeftScheme', scheme ?? 'local') };
  }
  if (wasPosted) return { take: false, notice: t('noticeLeftPost') };
  return 'probe';
}

/**
 * Whether Stitch's requests for a taken-over download may carry the site's cookies: never more
 * than the browser's own request did. An extension's fetch sends all of a site's cookies
 * (SameSite=Strict ones too) or none, while the browser withholds Strict ones (and Lax ones from
 * a subresource) when the page is on another site. So cookies go only when the page (the
 * download's referrer) is on the file's very host and scheme, a site the browser surely treats
 * as the same; anything else, a missing referrer included (a page may hide it), gets none. A
 * server that needs them then refuses the probe, and the browser keeps the download.
 */
export function takeoverCredentials(url: string, referrer: string | undefined): JobCredentials {
  try {
    const file = new URL(url);
    const page = new URL(referrer ?? '');
    return page.protocol === file.protocol && page.hostname === file.hostname ? 'include' : 'omit';
  } catch {
    return 'omit';
  }
}

/** Second look, after asking the server for the first byte again (with `credentials`). */
export function afterProbe(
  item: BrowserDownload,
  probe: ProbeResult,
  settings: Settings,
  credentials: JobCredentials = 'include',
): Decision {
  if ((probe.status === 401 || probe.status === 403) && credentials === 'omit') {
    return { take: false, notice: t('noticeLeftNoCookies', String(probe.status)) };
  }
  if (probe.status === 401 || probe.status === 403 || probe.status === 410) {
    return { take: false, notice: t('noticeLeftRefused', String(probe.status)) };
  }
  // The server's status text and the browser's error are English: the status says it.
  if (probe.status === 0) return { take: false, notice: t('noticeLeftNoAnswer') };
  if (probe.status !== 200 && probe.status !== 206) return { take: false, notice: t('noticeLeftStatus', String(probe.status)) };
  const expected = item.totalBytes !== undefined && item.totalBytes > 0 ? item.totalBytes : undefined;
  if (expected !== undefined && probe.size !== undefined && probe.size !== expected) {
    return { take: false, notice: t('noticeLeftOtherSize', formatCount(probe.size), formatCount(expected)) };
  }
  if (probe.contentType === 'text/html' && item.mime !== undefined && item.mime !== '' && !item.mime.includes('html')) {
    return { take: false, notice: t('noticeLeftWebPage') };
  }
  if (probe.size !== undefined && probe.size < settings.thresholdBytes) return LEAVE;
  if (isExcludedType(probe.contentType, settings.excludedTypes)) return LEAVE;
  return { take: true };
}

export function isExcludedType(mime: string | undefined, excluded: readonly string[]): boolean {
  const type = mime?.split(';')[0]?.trim().toLowerCase();
  if (!type) return false;
  return excluded.some((pattern) => (pattern.endsWith('/*') ? type.startsWith(pattern.slice(0, -1)) : type === pattern));
}

export function isExcludedSite(urls: readonly (string | undefined)[], sites: readonly string[]): boolean {
  return urls.some((url) => {
    if (!url) return false;
    let host: string;
    try {
      host = new URL(url).hostname.toLowerCase();
    } catch {
      return false;
    }
    return sites.some((site) => host === site || host.endsWith(`.${site}`));
  });
}
