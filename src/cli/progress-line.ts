import { formatBytes, type JobSnapshot } from '../engine';

/** One line of progress: a bar when the size is known, else bytes and rate. */
export function progressLine(s: JobSnapshot, width = 24): string {
  const rate = `${formatBytes(s.rate)}/s`;
  if (s.size === undefined || s.size === 0) return `${formatBytes(s.received)}  ${rate}`;
  const fraction = Math.min(1, s.received / s.size);
  const filled = Math.round(fraction * width);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  const eta = s.etaSeconds === undefined ? '' : `  ETA ${formatDuration(s.etaSeconds)}`;
  return `${bar} ${(fraction * 100).toFixed(1).padStart(5)}%  ${formatBytes(s.received)} / ${formatBytes(s.size)}  ${rate}${eta}`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
