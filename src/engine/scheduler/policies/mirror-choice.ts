import { rankedOrder } from '../../sources/hrw';
import type { MirrorView } from './views';

export interface MirrorChoiceContext<M extends MirrorView> {
  now: number;
  /** Requests each mirror may have in flight. */
  connections: (mirror: M) => number;
  /** At most this many mirrors are used at once. */
  maxMirrors: number;
  /** The file's identity for HRW ordering (its primary URL). */
  fileKey: string;
  /** The user's country (ISO 3166-1 alpha-2, lower case), if known: nearer mirrors first. */
  userLocation?: string;
}

/**
 * Which mirrors may take a block now, best first (papers 2 and 4): the first `maxMirrors`
 * usable ones in HRW order over (file, mirror), after the sources' priorities and the user's
 * country, the primary always in, so every client of a
 * file uses the same few mirrors; among those with a free connection, least loaded and
 * nearest first.
 */
export function chooseMirrors<M extends MirrorView>(mirrors: readonly M[], context: MirrorChoiceContext<M>): M[] {
  const usable = mirrors.filter((m) => m.usable(context.now));
  const primary = usable.filter((m) => m.isPrimary);
  const others = rankedOrder(
    usable.filter((m) => !m.isPrimary),
    (m) => m.url,
    context.fileKey,
    (m) => m.hint,
    context.userLocation,
  );
  const chosen = [...primary, ...others].slice(0, context.maxMirrors);
  const minRtt = Math.max(1, Math.min(...chosen.map((m) => m.rttMs ?? Infinity)));
  const cost = (m: M) => ((m.inFlight + 1) / context.connections(m)) * Math.max(1, (m.rttMs ?? minRtt) / minRtt);
  return chosen.filter((m) => m.inFlight < context.connections(m)).sort((a, b) => cost(a) - cost(b));
}
