import type { MirrorView, Playback } from './views';

/**
 * A block lasts at least this many round trips: its connection idles for one before the first byte, and
 * after a long enough idle, TCP starts again in slow start (a few more at a lower rate).
 */
const FAR_BLOCK_RTTS = 8;

/**
 * A mirror whose requests mostly wait for their headers gets blocks sized for its rate while sending, the measured
 * rate ÷ the share of time spent sending, counted as at most this many times the measured rate (its time sending
 * is short and noisy, and the end of the download needs blocks that end together).
 */
const MAX_SENDING_GAIN = 4;

/** Before a mirror's rate is known. */
export const INITIAL_BLOCK = 512 * 1024;

export interface BlockSizeContext {
  /** A block should last about this long at the mirror's rate. */
  blockSeconds: number;
  minBlockBytes: number;
  maxBlockBytes: number;
  /** Requests the mirror keeps in flight: its rate is shared among them. */
  connections: number;
  /** Bytes neither stored nor requested. */
  unclaimedBytes: number;
  /** Bytes requests in flight have yet to bring. */
  inFlightBytes: number;
  /** Mirrors sharing the remaining bytes… */
  busyMirrors: number;
  /** …and their rates together, bytes/s (0 until measured). */
  totalRate: number;
  playback: Playback | undefined;
}

/**
 * How many bytes the next block for `mirror` asks for (Rodriguez & Biersack): about
 * `blockSeconds` at its share of the rate and at least eight round trips, so request overhead
 * stays small; no more than half of each mirror's share of what is left, and lasting no more than
 * half the time the rest takes at all the mirrors' rates, so blocks shrink near the end and the
 * last ones finish together (where each connection is capped, an idle one is a loss), yet never
 * under two round trips unless other mirrors would then wait for it; while a player is attached,
 * no more than half its window, so a far block never holds up a seek for long.
 */
export function blockBytes(mirror: MirrorView, context: BlockSizeContext): number {
  const rate = mirror.rate();
  const rttSeconds = (mirror.rttMs ?? 0) / 1000;
  const seconds = Math.max(context.blockSeconds, FAR_BLOCK_RTTS * rttSeconds);
  const sending = Math.max(1 / MAX_SENDING_GAIN, 1 - (mirror.waitShare ?? 0));
  const perConnection = rate / Math.max(1, context.connections) / sending;
  let bytes = rate > 0 ? perConnection * seconds : INITIAL_BLOCK;
  bytes = Math.min(bytes, context.unclaimedBytes / (2 * Math.max(1, context.busyMirrors)));
  // The time the rest takes at all the mirrors' rates.
  const restSeconds = rate > 0 && context.totalRate > 0 ? context.unclaimedBytes / context.totalRate : undefined;
  if (restSeconds !== undefined) bytes = Math.min(bytes, (perConnection * restSeconds) / 2);
  // Each request leaves its connection idle for a round trip: a block lasts at least two…
  bytes = Math.max(bytes, perConnection * 2 * rttSeconds);
  bytes = Math.min(context.maxBlockBytes, Math.max(context.minBlockBytes, bytes));
  // …yet ends with all the work left (what requests in flight still bring too), its round trip included, where other
  // mirrors would otherwise wait for it: down to a round trip's worth of body (a slow mirror's last block may be
  // under the smallest), never under both.
  if (rate > 0 && context.totalRate > 0 && context.busyMirrors > 1) {
    const allSeconds = (context.unclaimedBytes + context.inFlightBytes) / context.totalRate;
    const least = Math.min(context.minBlockBytes, perConnection * rttSeconds);
    bytes = Math.min(bytes, Math.max(least, perConnection * (allSeconds - rttSeconds)));
  }
  return context.playback ? Math.min(bytes, context.playback.aheadBytes / 2) : bytes;
}
