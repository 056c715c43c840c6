import type { DownloadErrorCode } from '../errors';
import { englishDrop, englishRestart, type DropReason, type RestartCause } from '../notice';

/** The file has no known size or no working ranges: one stream must fetch it. */
export class FallbackToStream extends Error {}

/** The primary's file changed: every stored byte is void. */
export class RestartAll extends Error {
  constructor(readonly why: RestartCause) {
    super(englishRestart(why));
  }
}

/**
 * A problem with one mirror: it is dropped, and the download continues on the others. A bare
 * message (a redirect refused) is a failure of `code`, which the pages say by its code.
 */
export class MirrorProblem extends Error {
  readonly why: DropReason;
  constructor(
    why: DropReason | string,
    readonly code: DownloadErrorCode = 'bad-range',
  ) {
    super(typeof why === 'string' ? why : englishDrop(why));
    this.why = typeof why === 'string' ? { kind: 'failed', failure: { code }, message: why } : why;
  }
}

/** Why a request is aborted when another copy of the same bytes arrived first. */
export const LOST = Symbol('lost');

/** Why a far block is cut where it is when a player needs the bandwidth. */
export const YIELDED = Symbol('yielded');
