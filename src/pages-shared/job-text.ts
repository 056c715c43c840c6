import type { RelinkMismatch } from '../engine/relink';
import type { JobView } from '../messages';
import { t, uiLocale } from '../words/i18n';
import { retryingText } from '../words/failure-text';
import { formatEta, formatPercent, formatRate, formatSize, sizesApart } from '../words/format';

/** The state in words, for the row's badge (data-state carries the machine value). */
export function stateLabel(job: JobView): string {
  if (job.undoUntil !== undefined) return job.state === 'saved' || job.state === 'failed' ? t('stateRemoved') : t('stateCancelled');
  switch (job.state) {
    case 'queued':
      return t('stateQueued');
    case 'running':
      // Retrying says more (how often, until when) than stalled: both receive nothing.
      return job.retrying ? t('stateRetrying') : job.stalled ? t('stateStalled') : t('stateDownloading');
    case 'paused':
      // Paused by Stitch itself (storage full…) resumes on its own once the cause is gone.
      return job.pausedByUser || !job.error ? t('statePaused') : t('statePausedByStitch');
    case 'verifying':
      return t('stateVerifying');
    case 'saving':
      return t('stateSaving');
    case 'saved':
      return t('stateSaved');
    case 'failed':
      return t('stateFailed');
    case 'cancelled':
      return t('stateCancelled');
  }
}

/** `12.3 MB of 100 MB (12%)`, `100 MB` once saved or before the first byte, `4.1 MB of unknown size`. */
export function sizeText(job: JobView): string {
  if (job.size === undefined) return job.received === 0 ? t('sizeUnknown') : t('sizeUnknownTotal', formatSize(job.received));
  if (job.received === 0) return formatSize(job.size);
  if (job.state === 'saved' || job.state === 'saving' || job.received >= job.size) return formatSize(job.size);
  return t('sizeOfTotal', formatSize(job.received), formatSize(job.size), formatPercent(job.received, job.size));
}

/** The badge's colour class: a job waiting to retry is not shown as healthy. */
export function stateClass(job: JobView): string {
  return `state state-${job.retrying || (job.state === 'running' && job.stalled) ? 'retrying' : job.state}`;
}

/** Why a running job receives nothing, and when Stitch gives up; empty while all is well. */
export function retryText(job: JobView): string {
  return job.retrying ? retryingText(job.retrying) : '';
}

/** Only a running job that receives bytes has a rate worth showing; a stalled one says it gets none (`0 B/s`). */
export function rateText(job: JobView): string {
  if (job.state !== 'running' || job.retrying) return '';
  return job.stalled ? `${formatSize(0)}/s` : formatRate(job.rate);
}

/** A download's own speed limit, for its collapsed row (`limit 100 KB/s`); empty without one or once it has all its bytes. */
export function limitText(job: JobView): string {
  const fetching = job.state === 'queued' || job.state === 'running' || job.state === 'paused';
  return fetching && job.speedLimit !== undefined ? t('rowSpeedLimit', formatRate(job.speedLimit)) : '';
}

/** The host the file comes from (the whole text when it is not a URL). */
export function hostText(job: JobView): string {
  try {
    return new URL(job.url).host;
  } catch {
    return job.url;
  }
}

/** The host the file comes from and when it was added. */
export function originText(job: JobView, now = Date.now()): string {
  return `${hostText(job)} · ${dateText(job.createdAt, now)}`;
}

/**
 * The download's name for screen readers: the file name with its host and size, so that rows
 * of one name (eleven "file.bin") are told apart by their buttons too.
 */
export function jobName(job: JobView): string {
  return job.size === undefined
    ? t('jobNameHost', job.filename, hostText(job))
    : t('jobNameHostSize', job.filename, hostText(job), formatSize(job.size));
}

/** Today: the time; this year: day and month; older: the full date (in the browser's UI language). */
export function dateText(at: number, now = Date.now()): string {
  const date = new Date(at);
  const today = new Date(now);
  const locale = uiLocale();
  if (date.toDateString() === today.toDateString()) return new Intl.DateTimeFormat(locale, { timeStyle: 'short' }).format(date);
  if (date.getFullYear() === today.getFullYear()) return new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short' }).format(date);
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }).format(date);
}

export function etaText(job: JobView): string {
  if (job.state !== 'running' || job.retrying || job.stalled) return '';
  const eta = formatEta(job.etaSeconds);
  return eta ? t('timeLeft', eta) : '';
}

export const FINISHED_STATES: ReadonlySet<JobView['state']> = new Set(['saved', 'failed', 'cancelled']);

/** Why a new link does not serve the stored file, in the page's words and units. */
export function relinkMismatchText(mismatch: RelinkMismatch): string {
  switch (mismatch.kind) {
    case 'size-unknown':
      return t('relinkSizeNeverKnown');
    case 'status':
      return t('relinkAnswered', String(mismatch.status));
    case 'size':
      if (mismatch.size === undefined) return t('relinkUnknownSize', formatSize(mismatch.expected));
      return t('relinkOtherSize', ...sizesApart(mismatch.size, mismatch.expected));
    case 'version':
      return t('relinkOtherVersion');
    case 'bytes':
      return t('relinkOtherBytes', formatSize(mismatch.at));
  }
}
