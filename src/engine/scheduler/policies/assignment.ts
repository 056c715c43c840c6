import type { ByteRange } from '../../ranges';
import { blockBytes } from './block-size';
import type { Decision } from './decisions';
import { pickDuplicate } from './end-game';
import { chooseMirrors } from './mirror-choice';
import type { Plan } from '../loop/plan';
import type { MirrorView, Playback, RequestView } from './views';

/** A live view of the download: read again after each decision is carried out. */
export interface AssignmentContext<M extends MirrorView, R extends RequestView> {
  now: number;
  plan: Pick<Plan, 'nextBlock' | 'unclaimed'>;
  mirrors: readonly M[];
  requests(): Iterable<R>;
  /** Ranges requested now. */
  claims(): ByteRange[];
  /** How many more requests the block window allows. */
  windowRoom(): number;
  connections: (mirror: M) => number;
  maxMirrors: number;
  fileKey: string;
  userLocation?: string;
  referencePending: boolean;
  playback: Playback | undefined;
  /** Mirrors carrying a player's bytes: they take no other block now. */
  reserved?: ReadonlySet<M>;
  sizes: { blockSeconds: number; minBlockBytes: number; maxBlockBytes: number };
}

/**
 * Dynamic parallel access (Rodriguez & Biersack): every chosen mirror with a free connection
 * gets the next unrequested block, sized for it; when none is left it duplicates a slow block
 * (the end game). Yields one decision at a time; the caller carries each out before asking for
 * the next, so every decision sees the one before. Ends when the window is full or nobody can
 * take more. With a player attached, blocks start past its window (streaming priority has
 * requested the window itself).
 */
export function* assignWork<M extends MirrorView, R extends RequestView & { mirror: M }>(
  context: AssignmentContext<M, R>,
): Generator<Decision<M, R>> {
  const { plan, playback, now } = context;
  const from = playback ? playback.position + playback.aheadBytes : 0;
  for (let assigned = true; assigned;) {
    assigned = false;
    const chosen = chooseMirrors(context.mirrors, context).filter((m) => !context.reserved?.has(m));
    for (const mirror of chosen) {
      if (context.windowRoom() <= 0) return;
      const claims = context.claims();
      const unclaimedBytes = plan.unclaimed(claims).reduce((sum, r) => sum + r.end - r.start, 0);
      const busy = context.mirrors.filter((m) => m.phase === 'active' || m.phase === 'tentative');
      const totalRate = busy.reduce((sum, m) => sum + m.rate(), 0);
      const connections = context.connections(mirror);
      // What requests in flight still bring, each block once (an end-game copy brings the same bytes).
      const toCome = new Map<RequestView['group'], number>();
      for (const r of context.requests()) toCome.set(r.group, Math.min(toCome.get(r.group) ?? Infinity, Math.max(0, r.group.end - r.pos)));
      const inFlightBytes = [...toCome.values()].reduce((sum, bytes) => sum + bytes, 0);
      const bytes = blockBytes(mirror, {
        ...context.sizes,
        connections,
        unclaimedBytes,
        inFlightBytes,
        busyMirrors: busy.length,
        totalRate,
        playback,
      });
      const block = plan.nextBlock(claims, bytes, from);
      if (block) {
        yield { kind: 'issue', mirror, start: block.start, end: block.end };
        assigned = true;
        continue;
      }
      const slow = pickDuplicate(mirror, context.requests(), now, context.referencePending);
      if (slow) {
        yield { kind: 'duplicate', mirror, of: slow };
        assigned = true;
      }
    }
  }
}
