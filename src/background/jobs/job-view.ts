import { filenameFromUrl, isRetrying, sanitizeFilename, type JobError, type JobSnapshot } from '../../engine';
import type { JobView, JobViewState, MirrorContribution } from '../../messages';
import type { Room } from './disk-room';
import type { JobMeta } from './job-meta';

/** What only the job manager knows about a job at this moment. */
export interface ManagerFacts {
  /** Bytes in the store; stands in for `received` of a job reopened but not run yet. */
  storedBytes: number;
  /** Waiting in the manager's queue for a free slot: its place there. */
  queuePlace?: JobView['queuePlace'];
}

/** The page-facing view of a job: the engine's snapshot plus the background's queue and save phase. */
export function toJobView(snapshot: JobSnapshot, meta: JobMeta, facts: ManagerFacts, updatedAt = Date.now()): JobView {
  const held = meta.heldFor !== undefined && snapshot.status !== 'running' && snapshot.status !== 'complete';
  const state = held ? 'paused' : facts.queuePlace !== undefined && snapshot.status !== 'running' ? 'queued' : viewState(snapshot, meta);
  const storedBytes = facts.storedBytes;
  const received = state === 'saved' && snapshot.size !== undefined ? snapshot.size : Math.max(snapshot.received, storedBytes);
  const saveFailed = meta.save?.phase === 'failed';
  const error: (JobError & { room?: Room }) | undefined = saveFailed
    ? {
        code: saveFailureCode(meta.save!),
        message: meta.save?.error ?? 'saving the file failed',
        room: meta.save?.room,
      }
    : held
      ? { code: 'storage-full', message: meta.heldFor ?? '', room: meta.heldRoom }
      : snapshot.error;
  const showError = state === 'failed' || (state === 'paused' && error !== undefined);
  return {
    id: snapshot.id,
    url: snapshot.url,
    filename: filenameOf(snapshot, meta),
    // Until the job's own first answer, the take-over's probe knows the size.
    size: snapshot.size ?? meta.probed?.size,
    received,
    rate: state === 'running' ? snapshot.rate : 0,
    etaSeconds: state === 'running' ? snapshot.etaSeconds : undefined,
    ...(state === 'running' && snapshot.stalled ? { stalled: true as const } : {}),
    state,
    queuePlace: state === 'queued' ? facts.queuePlace : undefined,
    speedLimit: meta.speedLimit,
    pausedByUser: meta.pausedByUser,
    error: showError ? error?.message : undefined,
    errorCode: showError ? error?.code : undefined,
    failure: showError && error ? failureOf(error) : undefined,
    notices: snapshot.notices,
    mirrors: contributions(snapshot, received),
    retrying: state === 'running' ? retrying(snapshot) : undefined,
    undoUntil: meta.removing?.at,
    takenOver: meta.takenOver,
    ...(snapshot.stream ? { stream: true as const } : {}),
    savedDownloadId: meta.save?.phase === 'saved' ? meta.save.downloadId : undefined,
    ...(meta.save?.phase === 'saved' && meta.save.renamedFrom !== undefined && { renamedFrom: meta.save.renamedFrom }),
    contentType: snapshot.contentType,
    createdAt: meta.createdAt,
    updatedAt,
  };
}

/**
 * Once saved, the name on disk (the browser may have added " (1)"); before, the name to save
 * under: the user's, else the server's (its probe's before the job asked), else one from the URL.
 */
export function filenameOf(snapshot: Pick<JobSnapshot, 'filename' | 'url'>, meta: Pick<JobMeta, 'filename' | 'save' | 'probed'>): string {
  if (meta.save?.phase === 'saved' && meta.save.filename) return meta.save.filename;
  const name = meta.filename ?? snapshot.filename ?? meta.probed?.filename ?? filenameFromUrl(snapshot.url);
  return sanitizeFilename(name ?? 'download');
}

function viewState(snapshot: JobSnapshot, meta: JobMeta): JobViewState {
  if (snapshot.status !== 'complete') return snapshot.status;
  switch (meta.save?.phase) {
    case 'saved':
      return 'saved';
    case 'failed':
      return 'failed';
    default:
      return 'saving';
  }
}

/** While no source delivers: the fewest failures in a row (the download gives up when the last source does), the soonest next try, the last cause. */
function retrying(snapshot: JobSnapshot): JobView['retrying'] {
  const reports = snapshot.mirrors ?? [];
  if (!isRetrying(reports)) return undefined;
  const live = reports.filter((r) => r.dropped === undefined);
  const retryAts = live.map((r) => r.retryAt).filter((at): at is number => at !== undefined);
  // Every failure in a row records its cause: a source retrying without one is still being reported.
  const failure = live.find((r) => r.lastFailure)?.lastFailure;
  if (!failure) return undefined;
  return {
    attempts: Math.min(...live.map((r) => r.failures ?? 0)),
    maxAttempts: live[0]!.maxFailures,
    retryAt: retryAts.length > 0 ? Math.min(...retryAts) : undefined,
    failure,
  };
}

/** The facts of an error without its English words. */
/** Why a save failed, as the pages tell it: no room (with the numbers), a full download folder, or the browser's failure. */
function saveFailureCode(save: NonNullable<JobMeta['save']>): string {
  if (save.room) return 'save-no-room';
  return save.folderFull ? 'save-folder-full' : save.writeFailed ? 'save-write-failed' : 'save-failed';
}

function failureOf({ code, status, network, attempts, room }: JobError & { room?: Room }): JobView['failure'] {
  return { code, status, network, attempts, ...(room && { room }) };
}

/** Each source's share: the engine's per-mirror reports (the primary first). */
function contributions(snapshot: JobSnapshot, received: number): MirrorContribution[] {
  // Stalled: nothing comes from any source, whatever their meters still average.
  const running = snapshot.status === 'running' && !snapshot.stalled;
  const reports = snapshot.mirrors ?? [];
  if (reports.length === 0) {
    return received === 0 ? [] : [{ url: snapshot.url, host: hostOf(snapshot.url), bytes: received, rate: running ? snapshot.rate : 0 }];
  }
  return reports.map((m) => ({
    url: m.url,
    host: hostOf(m.url),
    bytes: m.bytes,
    rate: running ? m.rate : 0,
    dropped: m.dropped,
    ...(running && !m.dropped ? { connections: m.connections, connectionsWhy: m.connectionsWhy } : {}),
  }));
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
