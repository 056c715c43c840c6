import { freshRequestMs, remainingMs, type MirrorView, type RequestView } from './views';

/** A duplicate must finish in under this share of the original's remaining time. */
const CLEAR_GAIN = 0.75;

/**
 * The end game (Rodriguez & Biersack): when no unrequested block is left, an idle mirror
 * re-requests the remainder of the block in flight that it would deliver soonest relative to
 * its current holder — only where it would clearly finish sooner (counting its round trip),
 * and never a third copy. The first copy to arrive wins. While the reference bytes are
 * pending, the primary's own requests are not duplicated: they are the reference.
 */
export function pickDuplicate<R extends RequestView>(
  idle: MirrorView,
  requests: Iterable<R>,
  now: number,
  referencePending: boolean,
): R | undefined {
  let best: { request: R; gain: number } | undefined;
  for (const request of requests) {
    if (request.kind !== 'block' || request.mirror === idle || request.group.fetches.size >= 2) continue;
    if (referencePending && request.mirror.isPrimary) continue;
    const remaining = request.group.end - request.pos;
    if (remaining <= 0) continue;
    const theirMs = remainingMs(request, now);
    const theirRate = request.mirror.rate() / Math.max(1, request.mirror.inFlight);
    const myMs = freshRequestMs(idle, remaining, Math.max(theirRate, 1));
    const gain = theirMs - myMs;
    if (myMs < CLEAR_GAIN * theirMs && gain > (best?.gain ?? 0)) best = { request, gain };
  }
  return best?.request;
}
