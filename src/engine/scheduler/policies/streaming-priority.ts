import type { ByteRange } from '../../ranges';
import type { Decision } from './decisions';
import { ALIGN, type Plan } from '../loop/plan';
import { Reference } from '../loop/reference';
import { remainingMs, type MirrorView, type Playback, type RequestView } from './views';

const URGENT_MIN_BLOCK = 64 * 1024;
const URGENT_MAX_BLOCK = 4 * 1024 * 1024;
/** Browsers open at most six connections per server. */
const BROWSER_CONNECTIONS = 6;
/** A fresh request must bring the needed byte this much sooner to be worth a new connection. */
const SPLIT_GAIN_MS = 150;
/** A later request sharing a mirror with the one at the player's first missing byte is cut while that one has this long to go. */
const SHARE_CUT_MS = 1000;
/** Round trip assumed for a mirror not measured yet. */
const UNKNOWN_RTT_MS = 200;
/**
 * With other mirrors to share it, the request bringing a player's first missing byte keeps at most
 * this long of its bytes past that byte: the rest goes back to the window's blocks, which every
 * mirror takes nearest first (a block asked before the player came, or before a seek, can hold a
 * slow mirror's next ten seconds).
 */
const CARRIER_MAX_MS = 2000;

export interface StreamingContext<M extends MirrorView, R extends RequestView> {
  now: number;
  plan: Pick<Plan, 'nextBlock' | 'size' | 'firstMissing'>;
  /** Every attached player (two players may watch one job). */
  players: readonly Playback[];
  mirrors: readonly M[];
  requests: readonly R[];
  /** Ranges requested now (every block request's [start, end)). */
  claims: readonly ByteRange[];
  connections: (mirror: M) => number;
  /** How many more requests the block window allows. */
  windowRoom: number;
  /** The primary's first bytes are not in yet: its requests there are never cut. */
  referencePending: boolean;
}

export interface StreamingPlan<M extends MirrorView, R extends RequestView> {
  decisions: Decision<M, R>[];
  /** Mirrors that carry a player's bytes: they start no other block until the windows are stored. */
  reserved: Set<M>;
  /** Mirrors whose far requests this plan cuts, and the player's byte they are freed for (see FreedMirrors). */
  freed?: { mirrors: Set<M>; at: number };
}

/**
 * How many bytes an urgent request asks: about a second of media (at the player's bitrate, or
 * a quarter second at the mirror's rate when the bitrate is unknown), more as the player's
 * buffer grows, so a needed byte never sits behind a large block.
 */
export function urgentBlockBytes(mirror: MirrorView, player: Playback, bufferedBytes: number): number {
  const second = player.bytesPerSecond ?? mirror.rate() / 4;
  const bytes = Math.max(second, bufferedBytes / 4);
  return Math.min(URGENT_MAX_BLOCK, Math.max(URGENT_MIN_BLOCK, bytes));
}

/**
 * Streaming priority by time to byte (CoBlitz's in-order delivery, issue "seek anywhere"). For
 * each player, the first byte it lacks is brought by whichever is sooner: the request already
 * on its way there (its position and rate say when), or a fresh request on the mirror whose
 * round trip is shortest. When the fresh one wins, it starts at that byte and the older
 * request is cut where the new one begins (what it received stays). Then the rest of each
 * window is requested nearest first, in blocks sized by playback time, pipelined per mirror
 * (the next request goes out when the last is two round trips from done: pacedRemainingMs);
 * the window's mirrors take no far block until it is stored, and requests on them outside every window
 * (a far block, a window left by a seek) are cut. The scheduler keeps mirrors freed so from far
 * blocks until the byte they were freed for is stored (FreedMirrors), not only on this pump.
 */
export function streamingDecisions<M extends MirrorView, R extends RequestView & { mirror: M }>(
  context: StreamingContext<M, R>,
): StreamingPlan<M, R> {
  const { plan, now } = context;
  const decisions: Decision<M, R>[] = [];
  const reserved = new Set<M>();
  const claims = context.claims.map((c) => ({ ...c }));
  const blocks = context.requests.filter((r) => r.kind === 'block');
  const windows = context.players.map((p) => ({ player: p, start: p.position, end: Math.min(plan.size, p.position + p.aheadBytes) }));
  /** Where requests end once this plan's splits are carried out. */
  const endOf = new Map<R, number>();
  const inAnyWindow = (r: R) => windows.some((w) => r.start < w.end && (endOf.get(r) ?? r.group.end) > w.start);
  const inFlight = new Map<M, number>(context.mirrors.map((m) => [m, m.inFlight]));
  // A mirror's requests for the players' bytes that will not be done within two round trips:
  // a new one would only share its bandwidth, so it waits (pipelining, not parallel requests).
  const inWindow = (r: R, w: { start: number; end: number }) => r.start < w.end && (endOf.get(r) ?? r.group.end) > w.start;
  const pending = new Set<M | R>(blocks.filter((r) => inAnyWindow(r) && pacedRemainingMs(r, now) > 2 * rtt(r.mirror) + 50));
  // The most recently moved player comes first: requests for other players' windows do not keep
  // a mirror from it (they are cut below when they share its mirror).
  const first = windows.find((w) => plan.firstMissing(w.start) < w.end);
  const busy = (m: M, except?: R) =>
    [...pending].some((p) => p === m || (p !== except && (p as R).mirror === m && (!first || inWindow(p as R, first))));
  let room = context.windowRoom;
  const canTake = (m: M, except?: R) =>
    m.usable(now) && room > 0 && !busy(m, except) && inFlight.get(m)! < Math.min(BROWSER_CONNECTIONS, context.connections(m) + 2);
  const issue = (mirror: M, block: ByteRange) => {
    decisions.push({ kind: 'issue', mirror, start: block.start, end: block.end, urgent: true });
    claims.push(block);
    inFlight.set(mirror, inFlight.get(mirror)! + 1);
    pending.add(mirror);
    reserved.add(mirror);
    room--;
  };
  /** `request` ends at `at` from now: the bytes after are unclaimed again. */
  const split = (request: R, at: number) => {
    decisions.push({ kind: 'split', request, at });
    endOf.set(request, at);
    const claim = claims.find((c) => c.start === request.start && c.end === request.group.end);
    if (claim) claim.end = at;
  };

  for (const { player, start, end } of windows) {
    const cursor = plan.firstMissing(start);
    if (cursor >= end) continue;
    const buffered = cursor - start;
    // When the request already on its way brings byte `cursor`; unknown (0) before its mirror's rate is measured.
    const arrival = (r: R) =>
      r.pos > cursor || !(r.mirror.rate() > 0) ? 0 : remainingMs({ ...r, group: { ...r.group, end: cursor + 1 } }, now);
    const carrier = blocks.filter((r) => r.start <= cursor && r.group.end > cursor).sort((a, b) => arrival(a) - arrival(b))[0];
    const fresh = context.mirrors.filter((m) => canTake(m, carrier)).sort((a, b) => rtt(a) - rtt(b))[0];
    const protectedReference = carrier && context.referencePending && carrier.mirror.isPrimary && cursor < Reference.PROBE_BYTES;
    if (fresh && carrier && !protectedReference && arrival(carrier) > rtt(fresh) + SPLIT_GAIN_MS) {
      split(carrier, cursor);
      pending.delete(carrier);
      const block = plan.nextBlock(claims, urgentBlockBytes(fresh, player, buffered), cursor);
      if (block && block.start === cursor) issue(fresh, block);
    } else if (carrier && !protectedReference) {
      // It stays the fastest way to the byte, but not to everything after it.
      const at = carrierCut(carrier, cursor, context.mirrors.filter((m) => m !== carrier.mirror && m.usable(now)).length);
      if (at !== undefined) split(carrier, at);
    }
    if (carrier) reserved.add(carrier.mirror);
    // Nothing brings the byte and no mirror can take a request (a window full of blocks taken in
    // order while the player had no position): the nearest mirror is freed of its far requests.
    // Not when a request that received the byte is storing it: that needs no connection, and the
    // far requests cut for it would only be taken again, over and over, until its write ends.
    else if (!fresh && !claims.some((c) => c.start <= cursor && cursor < c.end)) {
      const nearest = context.mirrors.filter((m) => m.usable(now)).sort((a, b) => rtt(a) - rtt(b))[0];
      if (nearest) reserved.add(nearest);
    }
  }

  // The rest of every window, nearest first, to the fastest mirrors.
  for (const { player, start, end } of windows) {
    const buffered = plan.firstMissing(start) - start;
    for (let assigned = true; assigned;) {
      assigned = false;
      for (const mirror of context.mirrors.filter((m) => canTake(m)).sort((a, b) => b.rate() - a.rate())) {
        const block = plan.nextBlock(claims, urgentBlockBytes(mirror, player, buffered), start);
        if (!block || block.start < start || block.start >= end) break;
        issue(mirror, block);
        assigned = true;
      }
    }
  }

  // A window with bytes no request claims yet holds every usable mirror: a far block started while
  // the windows were stored (a player reading the index, between two needs) would keep a mirror
  // from them for a whole block. Its far requests are cut below and it takes window blocks next.
  for (const { start, end } of windows) {
    const unclaimed = plan.nextBlock(claims, URGENT_MIN_BLOCK, start);
    if (unclaimed && unclaimed.start >= start && unclaimed.start < end) for (const m of context.mirrors) if (m.usable(now)) reserved.add(m);
  }

  const allStored = windows.every((w) => plan.firstMissing(w.start) >= w.end);
  const freedMirrors = new Set<M>();
  const firstMirrors = new Set(first ? blocks.filter((r) => inWindow(r, first)).map((r) => r.mirror) : []);
  for (const d of decisions) if (d.kind === 'issue' && first && d.start < first.end && d.end > first.start) firstMirrors.add(d.mirror);
  for (const r of blocks) {
    // Another player's request on a mirror the first player's bytes need gives way to them, as does a
    // far request on a mirror a window needs: the mirror is freed for the first player's byte.
    const behindFirst = first !== undefined && !inWindow(r, first) && firstMirrors.has(r.mirror);
    const farFromWindows = !allStored && reserved.has(r.mirror) && !inAnyWindow(r);
    if (!behindFirst && !farFromWindows) continue;
    if (context.referencePending && r.mirror.isPrimary) continue;
    decisions.push({ kind: 'cut', request: r });
    freedMirrors.add(r.mirror);
  }
  const sharing = bandwidthSharers(windows, blocks, plan, now, endOf);
  for (const r of blocks) {
    if (!inAnyWindow(r)) continue;
    if (sharing.has(r) && !(context.referencePending && r.mirror.isPrimary)) {
      decisions.push({ kind: 'cut', request: r });
      continue;
    }
    decisions.push({ kind: 'stream', request: r });
    // A mirror busy with a player's bytes takes no far block meanwhile: it would share their bandwidth.
    reserved.add(r.mirror);
  }
  const freed = first && freedMirrors.size > 0 ? { mirrors: freedMirrors, at: plan.firstMissing(first.start) } : undefined;
  return { decisions, reserved: allStored ? new Set() : reserved, freed };
}

/**
 * Where the request carrying a player's first missing byte `cursor` is cut so that its mirror
 * brings at most CARRIER_MAX_MS of bytes past it, when `others` mirrors could take the rest
 * (alone, the mirror would fetch those bytes next anyway); undefined when it ends sooner.
 */
function carrierCut(carrier: RequestView, cursor: number, others: number): number | undefined {
  const rate = carrier.mirror.rate() / Math.max(1, carrier.mirror.inFlight);
  if (others === 0 || !(rate > 0)) return undefined;
  const from = Math.max(cursor, carrier.pos);
  const at = Math.ceil((from + Math.max(URGENT_MIN_BLOCK, (rate * CARRIER_MAX_MS) / 1000)) / ALIGN) * ALIGN;
  return at < carrier.group.end ? at : undefined;
}

/**
 * Requests of a window that share their mirror with the one bringing the window's first missing
 * byte (the lead) while the lead is far from done: blocks taken before the player attached, or
 * before a seek. They only slow the lead down; pipelining sends them again once it is nearly done.
 */
function bandwidthSharers<R extends RequestView>(
  windows: readonly { start: number; end: number }[],
  blocks: readonly R[],
  plan: Pick<Plan, 'firstMissing'>,
  now: number,
  endOf: ReadonlyMap<R, number>,
): Set<R> {
  const sharing = new Set<R>();
  for (const w of windows) {
    const cursor = plan.firstMissing(w.start);
    if (cursor >= w.end) continue;
    const needed = blocks.filter((r) => (endOf.get(r) ?? r.group.end) > cursor && r.start < w.end).sort((a, b) => a.start - b.start);
    const leads = new Map<MirrorView, R>();
    for (const r of needed) {
      const lead = leads.get(r.mirror);
      if (!lead) leads.set(r.mirror, r);
      else if (pacedRemainingMs(lead, now) > Math.max(SHARE_CUT_MS, 8 * rtt(r.mirror))) sharing.add(r);
    }
  }
  return sharing;
}

/**
 * When a request ends, for pipelining: by the sooner of its mirror's recent rate and its own pace
 * since its first byte. The mirror's rate counts the round trips and slow starts between its
 * requests, so by it alone the next request went out late, on a connection that had idled into
 * slow start again (a far server's bytes came at half its rate). Just after a request's first
 * bytes its pace is high (a window arrives at once), so on a far mirror the next request goes out
 * about a round trip after the last: two overlap, staggered, and neither connection idles.
 * (Trusting the pace only after two round trips of bytes gave the old timings back, measured.)
 * The cut of a request sharing the lead's mirror judges by the same estimate, or the two would
 * send and cut requests in turn.
 */
function pacedRemainingMs(request: RequestView, now: number): number {
  const received = request.pos - request.start;
  const sendingMs = now - request.issuedAt - rtt(request.mirror);
  const byMirror = remainingMs(request, now);
  if (received <= 0 || sendingMs <= 0) return byMirror;
  return Math.min(byMirror, ((request.group.end - request.pos) * sendingMs) / received);
}

function rtt(mirror: MirrorView): number {
  return mirror.rttMs ?? UNKNOWN_RTT_MS;
}
