/**
 * What went wrong with a download, in the user's language: the engine reports failures and
 * notices (a mirror dropped, a restart from zero), and why a server has the connections it has, as
 * data (its code, the HTTP status, how a connection failed, the attempts, the sizes, hosts and
 * counts), and these are the only words the popup, the player and the notifications say about them.
 */
import type { FailureFacts } from '../engine/errors';
import type { DropReason, RestartCause, StoredNotice } from '../engine/notice';
import type { ConnectionsWhy } from '../engine/scheduler/connections/connection-count';
import type { StepGain } from '../engine/scheduler/connections/step-verdict';
import type { JobFailure, JobView } from '../messages';
import { formatSize, sizesApart } from './format';
import { formatCount, numberFormat, plural, sentence, t, uiLocale, type MessageKey } from './i18n';

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
  'save-no-room': 'failSaveFailed',
  'save-folder-full': 'failSaveFolderFull',
  'save-write-failed': 'failSaveWriteFailed',
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
  if (status === 429) return 'failTooManyRequests';
  if (status === 503) return 'failServerBusy';
  if (status === 404 || status === 410) return 'failServerNoFile';
  if (status === 401 || status === 403) return 'failServerDenied';
  if (status >= 500) return 'failServerError';
  return 'failServerStatus';
}

/** One failure's cause as a sentence: "The server is busy or down for maintenance (error 503)." */
export function causeText(failure: Omit<JobFailure, 'attempts'>): string {
  if (failure.status !== undefined) return t(statusKey(failure.status), String(failure.status));
  // For want of room: how much more is needed and how much is free, what is kept and what to press.
  const { room } = failure;
  if (room)
    return t(failure.code === 'storage-full' ? 'failStorageFullRoom' : 'failSaveNoRoom', formatSize(room.needed), formatSize(room.free));
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

/**
 * A next try at least this far off is said with its time of day (a server's Retry-After, the
 * longest backoffs): the text stays true while nothing else changes, where "in 2 minutes" would not.
 */
const SAY_RETRY_TIME_MS = 60_000;

/** While no source delivers: the last failure, which attempt that was, when Stitch tries again and when it gives up. */
export function retryingText(retrying: NonNullable<JobView['retrying']>, now = Date.now()): string {
  const [attempts, max] = [formatCount(retrying.attempts), formatCount(retrying.maxAttempts)];
  const { retryAt } = retrying;
  const attempt =
    retryAt !== undefined && retryAt - now >= SAY_RETRY_TIME_MS
      ? t('retryAttemptAt', attempts, max, new Intl.DateTimeFormat(uiLocale(), { timeStyle: 'short' }).format(retryAt))
      : t('retryAttempt', attempts, max);
  return `${causeText(retrying.failure)} ${attempt}`;
}

/** Why the stored bytes could not be continued. */
export function restartText(cause: RestartCause): string {
  switch (cause.kind) {
    case 'changed': {
      const { change } = cause;
      if (change.what === 'size') return t('whyChangedSize', ...sizesApart(change.from, change.to));
      return t(change.what === 'etag' ? 'whyChangedEtag' : 'whyChangedDate');
    }
    case 'past-end':
      return t('whyPastEnd');
    case 'ranges-ignored':
      return t('whyRangesIgnored');
    case 'no-resume':
      return t('whyNoResume');
    case 'broke-no-resume':
      return t('whyBrokeNoResume');
    case 'encoding':
      return t('whyEncoding', cause.encoding);
    case 'sizes-differ':
      return t('whySizesDiffer', ...sizesApart(cause.mirrors, cause.primary));
  }
}

/** Why Stitch stopped using a source, or never used it. */
export function dropText(why: DropReason): string {
  switch (why.kind) {
    case 'other-size':
      if (why.size === undefined) return t('whyOtherSizeUnknown', formatSize(why.expected));
      return t('whyOtherSize', ...sizesApart(why.size, why.expected));
    case 'other-bytes':
      return t('whyOtherBytes', shortenUrls(why.primary), formatCount(why.at));
    case 'restart':
      return restartText(why.cause);
    case 'other-digest':
      return t('whyOtherDigest');
    case 'bad-piece':
      return t('whyBadPiece', formatCount(why.piece));
    case 'plain-http':
      return t('whyPlainHttp');
    case 'retry-later': {
      const later = t('whyRetryLater', formatCount(why.seconds));
      return why.status === undefined ? later : `${causeText({ code: 'http-status', status: why.status })} ${later}`;
    }
    case 'failed':
      return failureText(why.failure);
  }
}

const connections = (count: number) => plural(count, 'connectionsOne', 'connectionsOther');
const share = (value: number) => numberFormat({ style: 'percent' }).format(value);
const milliseconds = (ms: number) => formatCount(Math.round(ms));

/** What a step of the connection count brought, as a sentence after the step's own. */
function gainText(gain: StepGain): string {
  switch (gain.kind) {
    case 'enough':
      return t('connGainEnough', share(gain.server));
    case 'small':
      return t('connGainSmall', share(gain.server));
    case 'shared':
      return t('connGainShared', share(gain.server), share(gain.download));
  }
}

/** Why a server has the connections it has (the mirror legend's tooltip). */
export function connectionsWhyText(why: ConnectionsWhy): string {
  switch (why.kind) {
    case 'starting':
      return t('connWhyStarting', connections(why.count));
    case 'far-start':
      return t(why.answered ? 'connWhyFarStart' : 'connWhyFarStartUnanswered', milliseconds(why.ms), connections(why.count));
    case 'near-after-all':
      return t('connWhyNearAfterAll', milliseconds(why.ms));
    case 'step-unconfirmed':
      return `${t('connWhyStepUnconfirmed', formatCount(why.from), formatCount(why.to))} ${t('connGainEnough', share(why.gain))}`;
    case 'step':
      return `${t('connWhyStep', formatCount(why.from), formatCount(why.to), formatCount(why.next))} ${gainText(why.gain)}`;
    case 'one-more-short':
      return `${t('connWhyOneMoreShort', connections(why.count))} ${gainText(why.gain)}`;
    case 'each-pays':
      return t('connWhyEachPays', connections(why.count));
    case 'gave-back':
      return t('connWhyGaveBack', connections(why.removed));
    case 'at-max':
      return t('connWhyAtMax', connections(why.count));
    case 'at-server-limit':
      return t('connWhyAtServerLimit', connections(why.count));
    case 'ends-before-warm':
      return t('connWhyEndsBeforeWarm', connections(why.count));
    case 'server-allows': {
      const refused = why.status === undefined ? t('connRefusedOneClosed') : t('connRefusedOneStatus', String(why.status));
      return `${t('connWhyServerAllows', connections(why.count))} ${refused}`;
    }
    case 'refused': {
      const refused = why.status === undefined ? t('connRefusedClosed') : causeText({ code: 'http-status', status: why.status });
      return `${refused} ${t('connWaiting', formatCount(Math.round(why.waitMs / 100) / 10))}`;
    }
  }
}

/**
 * A job's notice as a sentence; an older version's notice (an English string) is shown as it
 * is, as are the background's page-wide notices (already in the user's language): addresses
 * shortened to their host (the full URL is one Copy URL away), made a sentence.
 */
export function noticeText(notice: StoredNotice): string {
  if (typeof notice === 'string') return sentence(shortenUrls(notice));
  switch (notice.kind) {
    case 'restarted':
      return t('noticeRestarted', restartText(notice.cause));
    case 'dropped':
      return t(notice.primary ? 'noticeServerDropped' : 'noticeMirrorDropped', shortenUrls(notice.url), dropText(notice.why));
    case 'not-used':
      return t('noticeNotUsed', shortenUrls(notice.url), dropText(notice.why));
    case 'sources-refused':
      return t(notice.from === 'server' ? 'noticeServerSourcesRefused' : 'noticeMetalinkSourcesRefused', formatCount(notice.count));
    case 'metalink-unread':
      return t('noticeMetalinkUnread');
    case 'more-mirrors': {
      const named = t(notice.from === 'server' ? 'noticeServerMirrors' : 'noticeMetalinkMirrors', formatCount(notice.count));
      if (notice.kept >= notice.count) return named;
      return `${named} ${t('noticeMirrorsKept', formatCount(notice.kept), formatCount(notice.max))}`;
    }
    case 'piece-failed':
      return t('noticePieceFailed', formatCount(notice.piece));
    case 'pieces-misfit':
      return t('noticePiecesMisfit');
    case 'reverifying':
      return t('noticeReverifying', shortenUrls(notice.url), formatCount(notice.ranges));
    case 'replaced':
      return t('noticeReplaced', shortenUrls(notice.mirror), shortenUrls(notice.url));
  }
}

/** `https://mirror.example.org:8080/pub/file.iso` → `mirror.example.org:8080`, inside any text. */
export function shortenUrls(text: string): string {
  return text.replace(/\bhttps?:\/\/([^/\s]+)[^\s,;)]*/g, '$1');
}
