import type { Settings } from '../../settings/schema';
import { isExcludedSite } from '../takeover/takeover-rules';

/**
 * Whether a download Stitch would take over goes to aria2 instead, by the options page's rules: an
 * endpoint is set, and the download is at least the size given (when its size is known) or comes from
 * (or is linked from a page of) one of the sites given.
 */
export function goesToAria2(download: { url: string; referrer?: string; size?: number }, settings: Settings): boolean {
  if (settings.aria2Url.trim() === '') return false;
  const { aria2MinBytes: min } = settings;
  if (min !== null && download.size !== undefined && download.size >= min) return true;
  return isExcludedSite([download.url, download.referrer], settings.aria2Sites);
}
