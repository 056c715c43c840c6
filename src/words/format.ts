/**
 * Numbers for people, in the browser's UI language (`Intl`). Sizes are counted like the
 * browsers' own download lists: binary multiples labelled KB, MB, GB (1 MB = 1,048,576 bytes),
 * with one decimal below 100 — Chromium's `ui::FormatBytes` and Firefox's
 * `DownloadUtils.convertByteUnits` both do so. The options page uses the same units.
 * (The CLI and the engine's own messages keep the engine's decimal `formatBytes`.)
 */
import { scaleBytes } from '../engine/pages';
import { formatCount, numberFormat, t } from './i18n';

export const KB = 1024;
export const MB = 1024 * KB;

const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];

/** `0 B`, `999 B`, `1,000 KB`, `1.5 KB`, `11.8 MB`, `118 MB`; a dash for nonsense. */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '–';
  // Rounded the way it is shown: 1023.96 KB would read "1,024 KB".
  const { value, unit } = scaleBytes(bytes, 1024, Math.round);
  const digits = unit > 0 && value < 100 ? 1 : 0;
  return `${numberFormat({ maximumFractionDigits: digits }).format(value)} ${SIZE_UNITS[unit]}`;
}

/** `2.4 MB/s`; an empty string for no rate, so idle rows stay quiet. */
export function formatRate(bytesPerSecond: number): string {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return '';
  return `${formatSize(bytesPerSecond)}/s`;
}

function unit(value: number, name: 'second' | 'minute' | 'hour' | 'day'): string {
  return numberFormat({ style: 'unit', unit: name, unitDisplay: name === 'day' ? 'long' : 'short' }).format(value);
}

/** `45 sec`, `3 min 5 sec`, `2 hr 10 min`, `3 days` (in English); empty when unknown. */
export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '';
  const s = Math.ceil(seconds);
  if (s < 60) return unit(s, 'second');
  if (s < 3600) {
    const rest = s % 60;
    return rest === 0 || s >= 600 ? unit(Math.round(s / 60), 'minute') : `${unit(Math.floor(s / 60), 'minute')} ${unit(rest, 'second')}`;
  }
  if (s < 86_400) {
    const minutes = Math.round((s % 3600) / 60);
    const hours = Math.floor(s / 3600) + (minutes === 60 ? 1 : 0);
    return minutes === 0 || minutes === 60 ? unit(hours, 'hour') : `${unit(hours, 'hour')} ${unit(minutes, 'minute')}`;
  }
  return unit(Math.round(s / 86_400), 'day');
}

/** A playing time: `30 sec`, `10 min`, `1 hr 5 min` (rounded, where an ETA rounds up); empty when unknown. */
export function formatDuration(seconds: number | undefined): string {
  return formatEta(seconds === undefined ? undefined : Math.round(seconds));
}

/** Whole percent (`12%`, `12 %` in German), never showing 100 before the last byte. */
export function formatPercent(received: number, size: number | undefined): string {
  if (size === undefined || size <= 0) return '';
  const percent = received < size ? Math.min(99, Math.floor((received / size) * 100)) : 100;
  return numberFormat({ style: 'percent' }).format(percent / 100);
}

/** Two sizes as they differ: in MB (or KB…) when that shows it, else in bytes (4 MB and 4 MB would say nothing). */
export function sizesApart(a: number, b: number): [string, string] {
  const [shownA, shownB] = [formatSize(a), formatSize(b)];
  return shownA === shownB ? [t('sizeInBytes', formatCount(a)), t('sizeInBytes', formatCount(b))] : [shownA, shownB];
}
