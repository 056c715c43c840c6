import type { DownloadErrorCode } from './errors';
import { englishDrop, type DropReason } from './notice';

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
