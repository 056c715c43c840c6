import type { JobView } from '../messages';
import { formatBytes, formatEta, formatPercent, formatRate } from '../pages-shared/format';

/** The state in words, for the row's badge (data-state carries the machine value). */
export function stateLabel(job: JobView): string {
  switch (job.state) {
    case 'queued':
      return 'Queued';
    case 'running':
      return 'Downloading';
    case 'paused':
      // Paused by Stitch itself (storage full…) resumes on its own once the cause is gone.
      return job.pausedByUser || !job.error ? 'Paused' : 'Paused by Stitch';
    case 'verifying':
      return 'Verifying';
    case 'saving':
      return 'Saving';
    case 'saved':
      return 'Saved';
    case 'failed':
      return 'Failed';
    case 'cancelled':
      return 'Cancelled';
  }
}

/** `12.3 MB of 100 MB (12 %)`, `100 MB` once saved, `4.1 MB of unknown size`. */
export function sizeText(job: JobView): string {
  if (job.size === undefined) return `${formatBytes(job.received)} of unknown size`;
  if (job.state === 'saved' || job.state === 'saving' || job.received >= job.size) return formatBytes(job.size);
  return `${formatBytes(job.received)} of ${formatBytes(job.size)} (${formatPercent(job.received, job.size)})`;
}

/** Only a running job has a rate worth showing. */
export function rateText(job: JobView): string {
  return job.state === 'running' ? formatRate(job.rate) : '';
}

export function etaText(job: JobView): string {
  if (job.state !== 'running') return '';
  const eta = formatEta(job.etaSeconds);
  return eta ? `${eta} left` : '';
}

export const FINISHED_STATES: ReadonlySet<JobView['state']> = new Set(['saved', 'failed', 'cancelled']);
