import { checkResponse, type Ask } from '../../http/response-check';
import type { ResponseFacts } from '../../http/response-facts';
import type { RemoteFile } from '../../remote-file';
import { MirrorProblem } from '../../mirror-problem';
import { FallbackToStream, RestartAll } from './outcomes';

/** What a response is checked against. */
export interface VetContext {
  isPrimary: boolean;
  /** What the primary told about the file; undefined until it answered. */
  file: RemoteFile | undefined;
  /** The size the download works with (from the primary, or mirrors that answered first). */
  size: number | undefined;
  /** This mirror's own validators (a mirror's ETag legitimately differs from the primary's). */
  mirrorValidators: { etag?: string; lastModified?: string };
  /** Whether other mirrors could carry on without this one. */
  othersLeft: boolean;
}

/**
 * Decides, before a byte of the body is used, whether a block response can be stored:
 * returns where its body goes, or throws what must happen instead — a retryable or fatal
 * DownloadError, a MirrorProblem (drop this mirror), RestartAll (the primary's file
 * changed) or FallbackToStream (the primary cannot do ranges and nobody else can help).
 */
export function vetResponse(facts: ResponseFacts, ask: Ask, context: VetContext): { start: number; end?: number; size?: number } {
  const { isPrimary, file } = context;
  const discovering = !file;
  const known: RemoteFile | undefined = isPrimary || !file ? file : { ...file, ...context.mirrorValidators };
  const total = facts.contentRange?.kind === 'bytes' ? facts.contentRange.total : undefined;
  if (!isPrimary && context.size !== undefined && total !== undefined && total !== context.size) {
    throw new MirrorProblem({ kind: 'other-size', size: total, expected: context.size }, 'bad-length');
  }
  const verdict = checkResponse(facts, ask, known, !discovering);
  if (verdict.kind === 'retry') throw verdict.error;
  if (verdict.kind === 'fatal') {
    if (discovering && isPrimary) throw verdict.error;
    throw new MirrorProblem({ kind: 'failed', failure: verdict.error.facts, message: verdict.error.message }, verdict.error.code);
  }
  if (verdict.kind === 'restart') {
    if (verdict.reason === 'changed' && isPrimary && !discovering) throw new RestartAll(verdict.cause);
    if (isPrimary && (discovering || !context.othersLeft)) throw new FallbackToStream();
    throw new MirrorProblem({ kind: 'restart', cause: verdict.cause });
  }
  if (facts.status !== 206) {
    // A 200 to "bytes=0-…": the server does not do ranges.
    if (isPrimary && discovering) throw new FallbackToStream();
    throw new MirrorProblem({ kind: 'restart', cause: { kind: 'ranges-ignored' } });
  }
  if (discovering && isPrimary && verdict.size === undefined) throw new FallbackToStream();
  return { start: verdict.start, end: verdict.end, size: verdict.size };
}
