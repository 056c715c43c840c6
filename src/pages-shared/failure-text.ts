/**
 * What went wrong with a download, in the user's language: the engine reports failures as data
 * (its code, the HTTP status, how a connection failed, the attempts), and these are the only
 * words the popup, the player and the notifications say about them.
 */
import type { FailureFacts } from '../engine/errors';
import type { JobFailure, JobView } from '../messages';
import { formatCount, plural, t, type MessageKey } from './i18n';

const BY_CODE: Record<string, MessageKey> = {
  redirect: 'failRedirect',
  changed: 'failChanged',
  'no-ranges': 'failNoRanges',
  'bad-range': 'failBadRange',
  'bad-length': 'failBadLength',
  encoding: 'failEncoding',
  protocol: 'failProtocol',
  'storage-full': 'failStorageFull',
  storage: 'failStorage',
  verify: 'failVerify',
  'save-failed': 'failSaveFailed',
  internal: 'failInternal',
};

const BY_NETWORK: Record<NonNullable<FailureFacts['network']>, MessageKey> = {
  refused: 'failRefused',
  reset: 'failReset',
  closed: 'failClosed',
  dns: 'failDns',
  timeout: 'failTimeout',
  unreachable: 'failUnreachable',
  unreached: 'failUnreached',
  silent: 'failSilent',
};

/** An error status by what it means to a person; the status itself is said too. */
function statusKey(status: number): MessageKey {
  if (status === 429 || status === 503) return 'failServerBusy';
  if (status === 404 || status === 410) return 'failServerNoFile';
  if (status === 401 || status === 403) return 'failServerDenied';
  if (status >= 500) return 'failServerError';
  return 'failServerStatus';
}

/** One failure's cause as a sentence: "The server is busy or down for maintenance (error 503)." */
export function causeText(failure: Omit<JobFailure, 'attempts'>): string {
  if (failure.status !== undefined) return t(statusKey(failure.status), String(failure.status));
  if (failure.code === 'network') return t(BY_NETWORK[failure.network ?? 'unreached']);
  const key = BY_CODE[failure.code];
  return key ? t(key) : t('unknownError');
}

/** Why a download failed or paused itself, and after how many attempts Stitch gave up. */
export function failureText(failure: JobFailure | undefined): string {
  if (!failure) return t('unknownError');
  const cause = causeText(failure);
  return failure.attempts ? `${cause} ${plural(failure.attempts, 'failGaveUpOne', 'failGaveUpOther')}` : cause;
}

/** While no source delivers: the last failure, which attempt that was, and when Stitch gives up. */
export function retryingText(retrying: NonNullable<JobView['retrying']>): string {
  const attempt = t('retryAttempt', formatCount(retrying.attempts), formatCount(retrying.maxAttempts));
  return `${causeText(retrying.failure)} ${attempt}`;
}
