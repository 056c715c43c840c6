/**
 * What happened to a download without stopping it (a mirror dropped, a restart from zero), as
 * data: the pages put it in the user's language (words/failure-text.ts), and the English
 * sentences here are for the CLI, logs and the engine's own error messages.
 */
import type { FailureFacts } from './errors';

/** How the file on the server shows it is not the one being downloaded. */
export type FileChange = { what: 'etag' | 'last-modified'; from: string; to: string } | { what: 'size'; from: number; to: number };

/** Why the stored bytes cannot be continued: the file is fetched again from zero, or the download stops. */
export type RestartCause =
  | { kind: 'changed'; change: FileChange }
  /** A 416: the bytes asked for lie past the file's end, so it is shorter than it was. */
  | { kind: 'past-end' }
  | { kind: 'ranges-ignored' }
  | { kind: 'no-resume' }
  | { kind: 'broke-no-resume' }
  | { kind: 'encoding'; encoding: string }
  /** The mirrors that answered before the primary serve a file of `mirrors` bytes; the primary one of `primary`. */
  | { kind: 'sizes-differ'; mirrors: number; primary: number };

/** Why a source is not used (dropped, or left out from the start). */
export type DropReason =
  | { kind: 'other-size'; size?: number; expected: number }
  | { kind: 'other-bytes'; at: number; primary: string }
  /** Its copy changed, ignores ranges or compresses parts. */
  | { kind: 'restart'; cause: RestartCause }
  | { kind: 'other-digest' }
  | { kind: 'bad-piece'; piece: number }
  | { kind: 'plain-http' }
  | { kind: 'retry-later'; seconds: number; status?: number }
  /** A failure asking again would not mend (an error status, a broken answer, too many attempts); `message` in English. */
  | { kind: 'failed'; failure: FailureFacts; message: string };

export type JobNotice =
  | { kind: 'restarted'; cause: RestartCause }
  | { kind: 'dropped'; url: string; primary: boolean; why: DropReason }
  | { kind: 'not-used'; url: string; why: DropReason }
  /** Sources a server's Link header or a Metalink file named that Stitch may not use; `first`: the first one's refusal, in English. */
  | { kind: 'sources-refused'; from: 'server' | 'metalink'; count: number; first: string }
  | { kind: 'metalink-unread'; message: string }
  | { kind: 'more-mirrors'; from: 'server' | 'metalink'; count: number; kept: number; max: number }
  | { kind: 'piece-failed'; piece: number; start: number; end: number }
  | { kind: 'pieces-misfit'; count: number; size: number }
  | { kind: 'reverifying'; ranges: number; url: string }
  | { kind: 'replaced'; mirror: string; url: string };

/** A stored notice: data, or an older version's English sentence (shown as it is). */
export type StoredNotice = JobNotice | string;

/** Every kind, so that a stored record of a kind this version does not know is left out, not shown blank. */
const NOTICE_KINDS: Record<JobNotice['kind'], true> = {
  restarted: true,
  dropped: true,
  'not-used': true,
  'sources-refused': true,
  'metalink-unread': true,
  'more-mirrors': true,
  'piece-failed': true,
  'pieces-misfit': true,
  reverifying: true,
  replaced: true,
};

export function isStoredNotice(value: unknown): value is StoredNotice {
  if (typeof value === 'string') return true;
  const kind = (value as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' && Object.hasOwn(NOTICE_KINDS, kind);
}

export function englishChange(change: FileChange): string {
  switch (change.what) {
    case 'etag':
      return `its ETag changed from ${change.from} to ${change.to}`;
    case 'last-modified':
      return `its Last-Modified date changed from ${change.from} to ${change.to}`;
    case 'size':
      return `its size changed from ${change.from} to ${change.to} bytes`;
  }
}

export function englishRestart(cause: RestartCause): string {
  switch (cause.kind) {
    case 'changed':
      return `the file changed on the server (${englishChange(cause.change)})`;
    case 'past-end':
      return 'the server says the requested bytes lie past the end of the file';
    case 'ranges-ignored':
      return 'the server ignored the range request and sent the whole file';
    case 'no-resume':
      return 'the server does not support resuming';
    case 'broke-no-resume':
      return 'the connection broke and the server cannot resume';
    case 'encoding':
      return `the server compressed a partial response (${cause.encoding})`;
    case 'sizes-differ':
      return `the mirrors that answered first serve a file of ${cause.mirrors} bytes, the primary one of ${cause.primary}`;
  }
}

export function englishDrop(why: DropReason): string {
  switch (why.kind) {
    case 'other-size':
      return `it serves a file of ${why.size ?? 'unknown'} bytes, not ${why.expected}`;
    case 'other-bytes':
      return `it serves different bytes than ${why.primary} (first difference at byte ${why.at})`;
    case 'restart':
      return why.cause.kind === 'changed' ? `its copy changed: ${englishRestart(why.cause)}` : englishRestart(why.cause);
    case 'other-digest':
      return 'it announces a different digest for the file';
    case 'bad-piece':
      return `it sent bytes that fail the hash of piece ${why.piece}`;
    case 'plain-http':
      return 'it is plain http and the download is https; without a digest of the file, bytes from it could be changed on the way';
    case 'retry-later':
      return `the server answered ${why.status ?? 'busy'}, and asked to retry only after ${why.seconds} s`;
    case 'failed':
      return why.message;
  }
}

export function englishNotice(notice: StoredNotice): string {
  if (typeof notice === 'string') return notice;
  switch (notice.kind) {
    case 'restarted':
      return `${englishRestart(notice.cause)}; restarted from zero`;
    case 'dropped':
      return `${notice.primary ? 'the server' : 'mirror'} ${notice.url} was dropped: ${englishDrop(notice.why)}`;
    case 'not-used':
      return `mirror ${notice.url} is not used: ${englishDrop(notice.why)}`;
    case 'sources-refused':
      return notice.from === 'server'
        ? `ignored ${notice.count} advertised source(s): ${notice.first}`
        : `ignored ${notice.count} of the Metalink file's URL(s): ${notice.first}`;
    case 'metalink-unread':
      return `ignored a Metalink description: ${notice.message}`;
    case 'more-mirrors': {
      const from = notice.from === 'server' ? 'the server' : 'the Metalink file';
      const also = notice.kept < notice.count ? `; ${notice.kept} of them kept (at most ${notice.max} URLs per file)` : '';
      return `${from} named ${notice.count} more mirror${notice.count > 1 ? 's' : ''}${also}`;
    }
    case 'piece-failed':
      return `piece ${notice.piece} (bytes ${notice.start}–${notice.end - 1}) failed its hash; fetching it again`;
    case 'pieces-misfit':
      return `ignored ${notice.count} piece hashes that do not fit a ${notice.size}-byte file`;
    case 'reverifying':
      return `the file did not match its digest; re-checking the ${notice.ranges} ranges mirrors sent against ${notice.url}`;
    case 'replaced':
      return `mirror ${notice.mirror} sent bytes that differ from ${notice.url}; they were replaced and it was dropped`;
  }
}
