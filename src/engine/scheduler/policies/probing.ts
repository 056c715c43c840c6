import type { ByteRange } from '../../ranges';
import { rankedOrder } from '../../sources/hrw';
import { INITIAL_BLOCK } from './block-size';
import type { MirrorView } from './views';

const DISCOVERY_BLOCK = 1024 * 1024;
/** The first block while a player waits: small, so the first frame comes soon. */
const DISCOVERY_BLOCK_PLAYING = 256 * 1024;

export interface DiscoveryContext {
  now: number;
  /** The file's size, once known. */
  size: number | undefined;
  /** Size known and the primary's first bytes (the reference) in. */
  known: boolean;
  playing: boolean;
}

/**
 * The primary's first block tells the size and gives the reference bytes every mirror is
 * checked against; until both are known it is requested whenever none is in flight.
 * Returns the block's end, or undefined when nothing needs asking.
 */
export function discoveryRequest(primary: MirrorView, context: DiscoveryContext): number | undefined {
  if (context.known || !primary.usable(context.now) || primary.inFlight > 0) return undefined;
  const first = context.playing ? DISCOVERY_BLOCK_PLAYING : DISCOVERY_BLOCK;
  return Math.min(first, context.size ?? first);
}

/**
 * A mirror's first block while the file's size is unknown, asked together with its probe so that its bytes come a
 * round trip sooner: the next INITIAL_BLOCK past the primary's first block and every block asked so far. Its body
 * waits until the mirror is checked; a guess past the file's end is given up unread.
 */
export function guessedFirstBlock(claims: readonly ByteRange[]): ByteRange {
  const start = claims.reduce((end, claim) => Math.max(end, claim.end), DISCOVERY_BLOCK);
  return { start, end: start + INITIAL_BLOCK };
}

/**
 * Which waiting mirrors to probe now (paper 4): in HRW order over (file, mirror) until
 * `maxMirrors` are in use or being checked, so every client of a file tries the same few
 * mirrors first (warm caches, even load) and a failing one makes room for the next.
 */
export function mirrorsToProbe<M extends MirrorView>(
  mirrors: readonly M[],
  now: number,
  maxMirrors: number,
  fileKey: string,
  userLocation?: string,
): M[] {
  const live = (m: M) => m.phase === 'active' || m.phase === 'tentative' || (m.phase === 'probing' && m.inFlight > 0);
  let slots = maxMirrors - mirrors.filter(live).length;
  const chosen: M[] = [];
  const waiting = mirrors.filter((m) => m.phase === 'probing' && m.inFlight === 0);
  for (const mirror of rankedOrder(
    waiting,
    (m) => m.url,
    fileKey,
    (m) => m.hint,
    userLocation,
  )) {
    if (slots <= 0) break;
    if (now < mirror.backoffUntil) continue;
    chosen.push(mirror);
    slots--;
  }
  return chosen;
}
