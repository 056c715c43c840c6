/**
 * Numbers for people. Sizes come from the engine's `formatBytes` (decimal units, 1 MB = 10^6
 * bytes, like the browser's downloads list and the options page's MB and kB/s fields), so the
 * pages and the CLI print them alike.
 */
import { formatBytes } from '../engine/pages';

export { formatBytes };

/** `2.5 MB/s`; an empty string for no rate, so idle rows stay quiet. */
export function formatRate(bytesPerSecond: number): string {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return '';
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** `45 s`, `3 min 5 s`, `2 h 10 min`, `3 days`; empty when unknown. */
export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '';
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) {
    const rest = s % 60;
    return rest === 0 || s >= 600 ? `${Math.round(s / 60)} min` : `${Math.floor(s / 60)} min ${rest} s`;
  }
  if (s < 86_400) {
    const minutes = Math.round((s % 3600) / 60);
    const hours = Math.floor(s / 3600) + (minutes === 60 ? 1 : 0);
    return minutes === 0 || minutes === 60 ? `${hours} h` : `${hours} h ${minutes} min`;
  }
  const days = Math.round(s / 86_400);
  return `${days} ${days === 1 ? 'day' : 'days'}`;
}

/** Whole percent, never showing 100 % before the last byte. */
export function formatPercent(received: number, size: number | undefined): string {
  if (size === undefined || size <= 0) return '';
  const percent = Math.min(100, (received / size) * 100);
  return `${received < size ? Math.min(99, Math.floor(percent)) : 100} %`;
}
