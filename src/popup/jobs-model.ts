import type { Aria2Row, Aria2Trouble, JobView, PortMessage, StreamRow, UiNotice, WatchedRow } from '../messages';
import { failureText, noticeText } from '../words/failure-text';
import { t } from '../words/i18n';
import { FINISHED_STATES } from '../pages-shared/job-text';

/**
 * What the popup knows: the jobs (in list order, see listOrder), the page-wide notices (oldest first), and
 * aria2: whether one is set up, the downloads handed to it, and why they could not be read when it did not answer;
 * the downloads left with the browser, which Stitch watches; and the video streams the tabs loaded.
 */
export interface PopupModel {
  jobs: JobView[];
  notices: UiNotice[];
  aria2: { configured: boolean; rows: Aria2Row[]; trouble?: Aria2Trouble };
  watched: WatchedRow[];
  streams: StreamRow[];
}

export const EMPTY_MODEL: PopupModel = { jobs: [], notices: [], aria2: { configured: false, rows: [] }, watched: [], streams: [] };

/** The model after one message from the UI port (or a job from an action's reply). */
export function applyPortMessage(model: PopupModel, message: PortMessage): PopupModel {
  switch (message.type) {
    case 'snapshot':
      return { ...model, jobs: listOrder(message.jobs), notices: [...message.notices] };
    case 'job': {
      const current = model.jobs.find((j) => j.id === message.job.id);
      // An action's reply can arrive after a newer port update; keep the newer view.
      if (current && current.updatedAt > message.job.updatedAt) return model;
      const others = model.jobs.filter((j) => j.id !== message.job.id);
      return { ...model, jobs: listOrder([...others, message.job]) };
    }
    case 'removed':
      return { ...model, jobs: model.jobs.filter((j) => j.id !== message.id) };
    case 'notice':
      if (model.notices.some((n) => n.id === message.notice.id)) return model;
      return { ...model, notices: [...model.notices, message.notice] };
    case 'aria2':
      return {
        ...model,
        aria2: { configured: message.configured, rows: message.rows, ...(message.trouble ? { trouble: message.trouble } : {}) },
      };
    case 'watched':
      return { ...model, watched: message.rows };
    case 'streams':
      return { ...model, streams: message.rows };
  }
}

const ACTIVE_STATES: ReadonlySet<JobView['state']> = new Set(['running', 'verifying', 'saving']);

/**
 * What is happening first: downloads under way (newest first), then the queue in the order it
 * starts them, then everything else, newest first.
 */
export function listOrder(jobs: readonly JobView[]): JobView[] {
  const group = (job: JobView) => (job.undoUntil === undefined && ACTIVE_STATES.has(job.state) ? 0 : job.queuePlace ? 1 : 2);
  return [...jobs].sort(
    (a, b) => group(a) - group(b) || (a.queuePlace?.position ?? 0) - (b.queuePlace?.position ?? 0) || b.createdAt - a.createdAt,
  );
}

/** Which page-wide buttons have something to act on (the background's all-action rules). */
export function pageActions(all: readonly JobView[]): {
  pauseAll: boolean;
  resumeAll: boolean;
  cancelAll: boolean;
  clearFinished: boolean;
} {
  const jobs = all.filter((j) => j.undoUntil === undefined);
  return {
    pauseAll: jobs.some((j) => j.state === 'running' || j.state === 'queued'),
    resumeAll: jobs.some((j) => j.state === 'paused'),
    cancelAll: jobs.some((j) => !FINISHED_STATES.has(j.state)),
    clearFinished: jobs.some((j) => FINISHED_STATES.has(j.state)),
  };
}

/**
 * What to say to screen-reader users when a job changes: finished, failed, stopped by Stitch,
 * or something new happened to it. Progress is never announced.
 */
export function announcement(before: JobView | undefined, after: JobView): string | undefined {
  if (!before) return undefined; // new rows are announced by whoever added them
  const name = after.filename;
  if (before.state !== after.state) {
    if (after.state === 'saved') return t('saidSaved', name);
    if (after.state === 'failed') return t('saidFailed', name, failureText(after.failure));
    if (after.state === 'paused' && !after.pausedByUser && after.failure) return t('saidPausedByStitch', name, failureText(after.failure));
  }
  if (after.notices.length > before.notices.length) return t('saidNotice', name, noticeText(after.notices.at(-1)!));
  return undefined;
}

/** `2 downloading · 14 MB/s · 1 stalled, reconnecting… · 3 queued` for the header; empty when nothing runs or waits. */
export function summary(jobs: readonly JobView[]): { running: number; rate: number; stalled: number; queued: number } {
  // A job waiting to retry, or receiving nothing, is not downloading: it must not look healthy in the header.
  const running = jobs.filter((j) => j.state === 'running' && !j.retrying && !j.stalled);
  const stalled = jobs.filter((j) => j.state === 'running' && !j.retrying && j.stalled).length;
  const queued = jobs.filter((j) => j.state === 'queued' && j.undoUntil === undefined).length;
  return { running: running.length, rate: running.reduce((sum, j) => sum + j.rate, 0), stalled, queued };
}
