// Hand-built snapshots for the scheduler's policies: plain objects, a fake clock (numbers).
import type { MirrorPhase } from '../../../src/engine/scheduler/loop/mirror-state';
import type { GroupView, MirrorView, RequestView } from '../../../src/engine/scheduler/policies/views';

export const KiB = 1024;
export const MiB = 1024 * KiB;

export interface TestMirror extends MirrorView {
  inFlight: number;
  deadlineMisses: number;
  backoffUntil: number;
  phase: MirrorPhase;
  rttMs: number | undefined;
}

/** A mirror with a rate in bytes/s (0: not measured yet) and a round trip. */
export function mirror(
  url: string,
  props: {
    rate?: number;
    rttMs?: number;
    inFlight?: number;
    primary?: boolean;
    phase?: MirrorPhase;
    backoffUntil?: number;
    waitShare?: number;
  } = {},
): TestMirror {
  const rate = props.rate ?? 0;
  return {
    url,
    isPrimary: props.primary ?? false,
    phase: props.phase ?? 'active',
    inFlight: props.inFlight ?? 0,
    rttMs: props.rttMs,
    backoffUntil: props.backoffUntil ?? 0,
    deadlineMisses: 0,
    waitShare: props.waitShare,
    rate: () => rate,
    usable(now: number) {
      return (this.phase === 'active' || this.phase === 'tentative') && now >= this.backoffUntil;
    },
  };
}

export interface TestRequest extends RequestView {
  mirror: TestMirror;
  group: GroupView & { fetches: Set<unknown> };
}

/** A block request in flight on `on`, at `pos` of [start, end). */
export function request(
  on: TestMirror,
  start: number,
  end: number,
  props: {
    pos?: number;
    issuedAt?: number;
    lastByteAt?: number;
    deadline?: number;
    urgent?: boolean;
    attempts?: number;
    kind?: 'block' | 'probe';
  } = {},
): TestRequest {
  const group = { end, urgent: props.urgent, fetches: new Set<unknown>(), attempts: props.attempts ?? 1, missedDeadline: false };
  const r: TestRequest = {
    kind: props.kind ?? 'block',
    mirror: on,
    start,
    pos: props.pos ?? start,
    group,
    issuedAt: props.issuedAt ?? 0,
    lastByteAt: props.lastByteAt ?? props.issuedAt ?? 0,
    expectedMs: undefined,
    deadline: props.deadline ?? Infinity,
  };
  group.fetches.add(r);
  return r;
}

/** A deterministic random in [0, 1) (mulberry32), so a failing case can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
