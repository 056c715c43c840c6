import type { FailureFacts } from './errors';
import type { JobStateRecord } from './store';
import type { HexDigest, PieceHashes } from './integrity/expected';
import type { RemoteFile } from './remote-file';
import type { SourceHint } from './sources/hrw';
import { isStoredNotice, type StoredNotice } from './notice';
import { MAX_SOURCES } from './options';
import { parseStreamLayout, type StreamLayout } from './streams/stream-layout';

/** What the file must hash to, known before the download (Metalink, or given by the user). */
/**
 * Why a job failed or paused itself: the engine's facts (`code` also 'internal' for a bug) and its
 * English sentence for the CLI and logs.
 */
export type JobError = Omit<FailureFacts, 'code'> & { code: string; message: string };

export interface ExpectedIntegrity {
  size?: number;
  digests: HexDigest[];
  pieces?: PieceHashes;
}

export type JobStatus = 'queued' | 'running' | 'paused' | 'verifying' | 'complete' | 'failed' | 'cancelled';

/** Everything a job must remember to be reopened after the process dies. */
export interface JobState {
  version: 1;
  id: string;
  url: string;
  /** Other URLs of the same file (mirrors); the download uses them all at once. */
  mirrors: string[];
  /** What the sources said about some mirrors' order (Link pri/geo, Metalink priority/location). */
  hints?: Record<string, SourceHint>;
  status: JobStatus;
  file?: RemoteFile;
  expected?: ExpectedIntegrity;
  /** A stream's segments laid out as the file (streams/stream-layout.ts); its sources are the job's URLs. */
  stream?: StreamLayout;
  /** Restarts from zero so far (file changed, or ranges broke on a small file). */
  restarts: number;
  /** Why the job failed or paused itself: in plain words, and as data for the pages' words. */
  error?: JobError;
  /** Things the user should know that did not stop the job. */
  notices: StoredNotice[];
  createdAt: number;
  updatedAt: number;
}

const STATUSES: readonly JobStatus[] = ['queued', 'running', 'paused', 'verifying', 'complete', 'failed', 'cancelled'];

/** Validates a stored record; undefined when it is not a job state this version understands. */
export function parseJobState(record: JobStateRecord | undefined): JobState | undefined {
  if (!record || record.version !== 1) return undefined;
  const { id, url, status, restarts, notices, createdAt, updatedAt, file, mirrors } = record;
  if (typeof id !== 'string' || typeof url !== 'string') return undefined;
  if (!STATUSES.includes(status as JobStatus)) return undefined;
  if (file !== undefined && !isRemoteFile(file)) return undefined;
  const stream = record.stream === undefined ? undefined : parseStreamLayout(record.stream);
  if (record.stream !== undefined && !stream) return undefined;
  return {
    ...(record as unknown as JobState),
    // A state saved before the cap on URLs per file existed may list thousands.
    mirrors: Array.isArray(mirrors) ? mirrors.filter((m): m is string => typeof m === 'string').slice(0, MAX_SOURCES - 1) : [],
    hints: parseHints(record.hints),
    stream,
    restarts: typeof restarts === 'number' ? restarts : 0,
    // An older version's notices are English strings: kept, and shown as they are.
    notices: Array.isArray(notices) ? notices.filter(isStoredNotice) : [],
    createdAt: typeof createdAt === 'number' ? createdAt : 0,
    updatedAt: typeof updatedAt === 'number' ? updatedAt : 0,
  };
}

function parseHints(value: unknown): Record<string, SourceHint> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const hints: Record<string, SourceHint> = {};
  for (const [url, hint] of Object.entries(value as Record<string, unknown>)) {
    const { priority, location } = (hint ?? {}) as SourceHint;
    hints[url] = {
      ...(Number.isSafeInteger(priority) ? { priority } : {}),
      ...(typeof location === 'string' && /^[a-z]{2}$/.test(location) ? { location } : {}),
    };
  }
  return hints;
}

function isRemoteFile(value: unknown): value is RemoteFile {
  const file = value as Partial<RemoteFile> | null;
  return (
    typeof file === 'object' &&
    file !== null &&
    typeof file.acceptRanges === 'boolean' &&
    typeof file.filename === 'string' &&
    (file.size === undefined || (Number.isSafeInteger(file.size) && file.size >= 0))
  );
}
