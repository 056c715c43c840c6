import type { RelinkMismatch } from '../engine/relink';
import type { JobView } from '../messages';
import { formatCount, sentence, t, uiLocale } from '../pages-shared/i18n';
import { retryingText } from '../pages-shared/failure-text';
import { formatEta, formatPercent, formatRate, formatSize } from '../pages-shared/format';

/** The state in words, for the row's badge (data-state carries the machine value). */
export function stateLabel(job: JobView): string {
  if (job.undoUntil !== undefined) return job.state === 'saved' || job.state === 'failed' ? t('stateRemoved') : t('stateCancelled');
  switch (job.state) {
    case 'queued':
      return t('stateQueued');
    case 'running':
      return job.retrying ? t('stateRetrying') : t('stateDownloading');
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
  return `state state-${job.retrying ? 'retrying' : job.state}`;
}

/** Why a running job receives nothing, and when Stitch gives up; empty while all is well. */
export function retryText(job: JobView): string {
  return job.retrying ? retryingText(job.retrying) : '';
}

/** `https://mirror.example.org:8080/pub/file.iso` → `mirror.example.org:8080`, inside any text. */
export function shortenUrls(text: string): string {
  return text.replace(/\bhttps?:\/\/([^/\s]+)[^\s,;)]*/g, '$1');
}

/**
 * An engine notice (English) in the popup's words: addresses shortened to their host (the full
 * URL is one Copy URL away), a full sentence, and for a dropped source, what Stitch did and that
 * the file is safe ("mirror <url> was dropped: <why>" is the engine's wording, mirror-set.ts).
 */
export function noticeText(notice: string): string {
  const short = shortenUrls(notice);
  const dropped = /^(the server|mirror) (\S+) was dropped: (.+?)\.?$/i.exec(short);
  if (dropped) return t(dropped[1]!.toLowerCase() === 'mirror' ? 'noticeMirrorDropped' : 'noticeServerDropped', dropped[2]!, dropped[3]!);
  const text = sentence(short);
  return /\bwas dropped\b/.test(text) ? `${text} ${t('droppedSuffix')}` : text;
}

/** Only a running job that receives bytes has a rate worth showing. */
export function rateText(job: JobView): string {
  return job.state === 'running' && !job.retrying ? formatRate(job.rate) : '';
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
  if (job.state !== 'running' || job.retrying) return '';
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

/** Two sizes as they differ: in MB (or KB…) when that shows it, else in bytes (4 MB and 4 MB would say nothing). */
function sizesApart(a: number, b: number): [string, string] {
  const [shownA, shownB] = [formatSize(a), formatSize(b)];
  return shownA === shownB ? [t('sizeInBytes', formatCount(a)), t('sizeInBytes', formatCount(b))] : [shownA, shownB];
}
