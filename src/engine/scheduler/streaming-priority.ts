import type { ByteRange } from '../ranges';
import type { Decision } from './decisions';
import type { Plan } from './plan';
import type { MirrorView, Playback, RequestView } from './views';

const URGENT_MIN_BLOCK = 64 * 1024;
const URGENT_MAX_BLOCK = 512 * 1024;
/** Requests with a player's bytes per mirror: more would slow the nearest one. */
const URGENT_PER_MIRROR = 2;
/** Browsers open at most six connections per server. */
const BROWSER_CONNECTIONS = 6;

export interface StreamingContext<M extends MirrorView, R extends RequestView> {
  now: number;
  plan: Pick<Plan, 'nextBlock' | 'size'>;
  playback: Playback;
  mirrors: readonly M[];
  requests: readonly R[];
  /** Ranges requested now (every block request's [start, end)). */
  claims: readonly ByteRange[];
  connections: (mirror: M) => number;
  /** How many more requests the block window allows. */
  windowRoom: number;
  /** The primary's first bytes are not in yet: its requests are never cut. */
  referencePending: boolean;
}

export interface StreamingPlan<M extends MirrorView, R extends RequestView> {
  decisions: Decision<M, R>[];
  /** Some of the player's bytes are still unrequested: nothing else may start. */
  holdOthers: boolean;
}

/**
 * Streaming priority (CoBlitz's in-order delivery): the bytes just ahead of the playback
 * position go first, nearest first, in small blocks (a quarter second at the mirror's rate),
 * to the fastest mirrors, at most two per mirror so the nearest block is not slowed by the
 * ones after it. Inside the window the two nearest requests per mirror store every 128 KiB;
 * the others are cut. Until every byte of the window is requested, far blocks are cut where
 * they are (what they received is kept) and nothing else starts.
 */
export function streamingDecisions<M extends MirrorView, R extends RequestView & { mirror: M }>(
  context: StreamingContext<M, R>,
): StreamingPlan<M, R> {
  const { plan, playback, now } = context;
  const decisions: Decision<M, R>[] = [];
  const start = playback.position;
  const end = Math.min(plan.size, playback.position + playback.aheadBytes);
  const keep = (r: R) => r.group.urgent === true || (context.referencePending && r.mirror.isPrimary);
  const blocks = context.requests.filter((r) => r.kind === 'block');

  const inWindow = new Map<M, R[]>();
  for (const r of blocks) {
    if (r.group.end <= start || r.start >= end) continue;
    inWindow.set(r.mirror, [...(inWindow.get(r.mirror) ?? []), r]);
  }
  for (const requests of inWindow.values()) {
    requests.sort((a, b) => a.pos - b.pos);
    requests.forEach((r, i) => {
      if (i < URGENT_PER_MIRROR) decisions.push({ kind: 'stream', request: r });
      else if (!keep(r)) decisions.push({ kind: 'cut', request: r });
    });
  }

  const claims = [...context.claims];
  const inFlight = new Map<M, number>(context.mirrors.map((m) => [m, m.inFlight]));
  const urgent = new Map<M, number>();
  for (const r of blocks) if (r.group.urgent) urgent.set(r.mirror, (urgent.get(r.mirror) ?? 0) + 1);
  let room = context.windowRoom;
  const nextInWindow = (bytes: number) => {
    const block = plan.nextBlock(claims, bytes, start);
    return block && block.start >= start && block.start < end ? block : undefined;
  };
  for (let assigned = true; assigned; ) {
    assigned = false;
    const fastest = context.mirrors
      .filter((m) => m.usable(now) && inFlight.get(m)! < Math.min(BROWSER_CONNECTIONS, context.connections(m) + 2))
      .sort((a, b) => b.rate() - a.rate());
    for (const mirror of fastest) {
      if ((urgent.get(mirror) ?? 0) >= URGENT_PER_MIRROR || room <= 0) continue;
      const block = nextInWindow(Math.min(URGENT_MAX_BLOCK, Math.max(URGENT_MIN_BLOCK, mirror.rate() / 4)));
      if (!block) return { decisions, holdOthers: false };
      decisions.push({ kind: 'issue', mirror, start: block.start, end: block.end, urgent: true });
      claims.push(block);
      inFlight.set(mirror, inFlight.get(mirror)! + 1);
      urgent.set(mirror, (urgent.get(mirror) ?? 0) + 1);
      room--;
      assigned = true;
    }
  }
  if (nextInWindow(1) === undefined) return { decisions, holdOthers: false };
  for (const r of blocks) {
    const far = r.group.end <= start || r.start >= end;
    if (far && !keep(r)) decisions.push({ kind: 'cut', request: r });
  }
  return { decisions, holdOthers: true };
}
