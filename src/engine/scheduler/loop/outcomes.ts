import { englishRestart, type RestartCause } from '../../notice';

/** The file has no known size or no working ranges: one stream must fetch it. */
export class FallbackToStream extends Error {}

/** The primary's file changed: every stored byte is void. */
export class RestartAll extends Error {
  constructor(readonly why: RestartCause) {
    super(englishRestart(why));
  }
}

/** Why a request is aborted when another copy of the same bytes arrived first. */
export const LOST = Symbol('lost');

/** Why a far block is cut where it is when a player needs the bandwidth. */
export const YIELDED = Symbol('yielded');
