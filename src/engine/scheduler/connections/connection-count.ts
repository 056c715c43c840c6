/**
 * How many connections one server gets (with HTTP/2: how many requests in flight on its one
 * connection), decided by measurement. Pure: no timers, no I/O; the caller passes the time.
 *
 * - Grow: start with `initial` (four times that for a far server, where each step costs a slow start of
 *   long round trips); once the count in use has had time to warm up (slow start: the round trips
 *   a new connection needs to reach the rate of the others) and carried enough bytes, judge the step that
 *   led to it, over the last window of observations; a step whose added connections already clearly pay is
 *   taken before they are warm (a far server's slow start takes a second). Whether a step paid is
 *   step-verdict.ts (the server's gain, each added connection's share, and the whole download's gain). The rate a
 *   step is judged against is taken while the whole download holds steady (and beside other servers counts the
 *   download at its level before, if higher), and beside other servers a step must pay in two windows in a row: a
 *   download still ramping, in a dip, or in one burst would make any step seem to pay.
 *   While steps pay, the count doubles (quadruples after a step that scaled almost linearly; grows by one
 *   after a step the whole download gained only just enough of), so a server that caps each connection gets
 *   its 16 within three steps; a step that does not pay is undone and half of it tried, down to one
 *   connection: the count settles where one more does not pay.
 * - Hold: at the plateau, every `reprobeMs` try one connection more (the server may have room again) or
 *   one fewer: if the rate holds without it, it is given back, and then twice as many, while it holds.
 * - Back off: a 429 or 503, or a connection refused or reset before the headers, means the server's limit
 *   is the number of connections that were working (server-limit.ts: remembered, with its back-off).
 * Slow start's part in judging a step is slow-start.ts; the rate over the last window, rate-window.ts.
 */
import { ServerLimit, type ServerLimitOptions } from './server-limit';
import { RateWindow, type RateWindowOptions } from './rate-window';
import { endsBeforeWarm, farStartCount, rewarmCount, warmupMs, type WarmupOptions } from './slow-start';
import { sharesDownload, stepGain, stepPays, type Measured, type StepGain, type StepVerdictOptions } from './step-verdict';

export interface ConnectionCountOptions extends WarmupOptions, RateWindowOptions, ServerLimitOptions, StepVerdictOptions {
  /** The cap (the user's maximum, or a per-site override): at most this many, ever. */
  max: number;
  initial: number;
  /** After a doubling whose connections each brought this share (and the download as much), the next step quadruples. */
  linearShare: number;
  /**
   * A step after which the whole download gained less than this share of what the server gained paid only just (other
   * servers lost the rest, or noise made up the difference): the next step adds one connection, not as many again.
   */
  doublingNetShare: number;
  /** The round trip assumed until an observation gives one. */
  defaultRttMs: number;
  /** At the plateau, a probe one up or one down this often. */
  reprobeMs: number;
  /**
   * A server this far (its shortest round trip) starts with more than `initial` (slow-start.ts, farStartCount).
   */
  farRttMs: number;
}

export const DEFAULT_CONNECTION_COUNT: ConnectionCountOptions = {
  max: 16,
  initial: 2,
  minGain: 0.1,
  minShare: 0.5,
  minNetShare: 0.5,
  linearShare: 0.8,
  doublingNetShare: 0.65,
  warmupMs: 50,
  warmupRtts: 6,
  measureMs: 60,
  measureRtts: 2,
  minMeasureBytes: 128 * 1024,
  defaultRttMs: 100,
  reprobeMs: 5_000,
  backoffMs: 1_000,
  maxBackoffMs: 60_000,
  limitReprobeMs: 30_000,
  farRttMs: 120,
};

export interface RateObservation {
  /** Bytes/s received from this server over all its connections, right now. */
  totalRate: number;
  /** Connections (HTTP/2: requests) to this server that are transferring. */
  connections: number;
  /** The server's round trip, if known (e.g. the shortest time to the response headers). */
  rttMs?: number;
  /** Until it first answers: how long ago its first request went out (its round trip is at least that). */
  unansweredMs?: number;
  /** Bytes/s the whole download receives right now, from every server; default `totalRate` (one server). */
  downloadRate?: number;
  /** Bytes the download still needs, if known: no step adds connections that would be warm only after its end. */
  remainingBytes?: number;
}

export interface Refusal {
  /** 429 or 503; undefined when the connection was refused or reset before any header. */
  status?: number;
  retryAfterMs?: number;
  /** Connections to this server that were working when it refused another one. */
  connections: number;
}

/**
 * Why a server has the connections it has, as data: the pages say it in the user's language
 * (words/failure-text.ts). Gains are shares of the rate before the step.
 */
export type ConnectionsWhy =
  | { kind: 'starting'; count: number }
  /** A server `ms` away (`answered`), or with no answer after `ms`: more connections from the start. */
  | { kind: 'far-start'; count: number; ms: number; answered: boolean }
  /** Its first round trips were slow, not the server (it answers in `ms`): the far start is given back. */
  | { kind: 'near-after-all'; ms: number }
  /** `from` → `to` connections paid, beside other servers: measured again before the next step. */
  | { kind: 'step-unconfirmed'; from: number; to: number; gain: number }
  /** `from` → `to` connections raised the rate by `gain`: `next` is tried (more if it paid, fewer if not). */
  | { kind: 'step'; from: number; to: number; gain: StepGain; next: number }
  /** Steady at `count`: one more did not pay. */
  | { kind: 'one-more-short'; count: number; gain: StepGain }
  /** Steady at `count`: one fewer lowered the rate. */
  | { kind: 'each-pays'; count: number }
  | { kind: 'gave-back'; removed: number }
  | { kind: 'at-max'; count: number }
  | { kind: 'at-server-limit'; count: number }
  | { kind: 'ends-before-warm'; count: number }
  /** The server refused one more connection beside `count` (`status`: 429 or 503; none: closed before answering). */
  | { kind: 'server-allows'; count: number; status?: number }
  /** The server refused with none working: nothing new is opened for `waitMs`. */
  | { kind: 'refused'; status?: number; waitMs: number };

export class ConnectionCount {
  private readonly options: ConnectionCountOptions;
  private target: number;
  /** The count and rate a change is judged against. */
  private base: Measured | undefined;
  /** After a step that did not pay, steps no longer double. */
  private refining = false;
  private plateauSince: number | undefined;
  private nextProbeUp = true;
  private readonly window: RateWindow;
  private readonly refusals: ServerLimit;
  private rttMs: number;
  private why: ConnectionsWhy;
  /** After a reset, until `until`: as many connections as carry `rate` (rewarmCount). */
  private rewarm = { until: -Infinity, rate: 0 };
  /** Started with more than `initial` for a far server. */
  private farStart = false;
  private remainingBytes: number | undefined;
  /** A count whose step paid in one window, beside other servers: it must pay in the next one too. */
  private unconfirmed: number | undefined;

  constructor(options: Partial<ConnectionCountOptions> = {}) {
    this.options = { ...DEFAULT_CONNECTION_COUNT, ...options };
    const { max, initial } = this.options;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`the most connections per server must be a whole number ≥ 1, not ${max}`);
    this.target = Math.min(Math.max(1, initial), max);
    this.rttMs = this.options.defaultRttMs;
    this.window = new RateWindow(this.options);
    this.refusals = new ServerLimit(this.options);
    this.why = { kind: 'starting', count: this.target };
  }

  /** Why the count is what it is, for the popup. */
  get reason(): ConnectionsWhy {
    return this.why;
  }
  /** The server's remembered limit (from a refusal), if any. */
  get serverLimit(): number | undefined {
    return this.refusals.known;
  }

  /** How many connections may be open now; 0 only while backing off from a refusal that left none working. */
  limit(now: number): number {
    const count = this.refusals.blocked(now) ? this.target : Math.max(1, this.target);
    const { until, rate } = this.rewarm;
    return now < until ? Math.min(this.options.max, this.refusals.known ?? Infinity, rewarmCount(count, rate, this.rttMs)) : count;
  }

  /**
   * Its connections broke together (a reset): the new ones start in slow start. Until they are warm, as many as
   * carry its rate from their first round trip (at least twice the count; within the cap and a known limit), unjudged.
   */
  reset(now: number): void {
    const perConnection = this.base ? this.base.rate / this.base.count : 0;
    this.rewarm = { until: now + warmupMs(perConnection, this.rttMs, this.options), rate: this.base?.rate ?? 0 };
  }

  /** The server's total rate with `connections` transferring; call it regularly (e.g. with each progress tick). */
  observe(now: number, observation: RateObservation): void {
    if (observation.rttMs !== undefined && observation.rttMs > 0) {
      this.rttMs = observation.rttMs;
      this.startFar(true);
    } else if (observation.unansweredMs !== undefined && observation.unansweredMs >= this.options.farRttMs) {
      // No need to wait for its answer to know it is far: its connections' slow starts begin a round trip sooner.
      this.rttMs = observation.unansweredMs;
      this.startFar(false);
    }
    this.remainingBytes = observation.remainingBytes;
    const connections = observation.connections;
    this.window.add(now, observation.totalRate, connections, observation.downloadRate);
    if (now < this.rewarm.until) return;
    // Judged only once the count asked for is the count in use (the caller may not have opened them all yet).
    if (connections !== this.limit(now) || connections === 0) return;
    const measured = this.window.rate(now, this.rttMs);
    if (!measured) return;
    const { rate, downloadRate, downloadRise, downloadLevel, firstAt, startedAt } = measured;
    const base = this.base;
    const stepping = base !== undefined && connections > base.count;
    // A rate the next step is judged against is taken while the whole download holds steady: while it still
    // rises (its servers' connections in slow start, other servers joining), any step would seem to raise it.
    // Beside other servers, a dip of the download (a busy client) would too: it counts at its level before.
    const taking = !base || connections === base.count;
    if (taking && downloadRise > this.options.minGain) return;
    const step = { count: connections, rate, downloadRate };
    if (taking && sharesDownload(step, step, this.options)) step.downloadRate = Math.max(downloadRate, downloadLevel);
    // The last window lies past the warm-up, or the step already pays while its connections still warm up,
    // each added one bringing almost an average connection's rate (a margin no busy moment of the client fakes).
    const perConnection = stepping ? base.rate / base.count : rate / connections;
    const warm = firstAt - startedAt >= warmupMs(perConnection, this.rttMs, this.options);
    if (!warm && !(stepping && stepPays(base, step, this.options, this.options.linearShare))) return;
    this.window.restart(now);
    this.judge(now, step);
  }

  /** Raises the first count once the server's round trip shows it far (before anything was judged or refused). */
  private startFar(answered: boolean): void {
    const { initial, max, farRttMs } = this.options;
    if (this.farStart || this.base || this.refusals.known !== undefined || this.target !== Math.min(initial, max)) return;
    const count = farStartCount(this.rttMs, this.target, max, farRttMs);
    if (count === undefined) return;
    this.farStart = true;
    this.target = count;
    this.why = { kind: 'far-start', count, ms: this.rttMs, answered };
  }

  /** The server refused one more connection: 429/503, or refused or reset before the headers. */
  refused(now: number, refusal: Refusal): void {
    const working = Math.max(0, refusal.connections);
    const wait = this.refusals.refused(now, working, refusal.retryAfterMs);
    const known = this.refusals.known!;
    this.target = working === 0 ? 0 : known;
    this.base = undefined;
    this.unconfirmed = undefined;
    this.refining = true;
    this.plateauSince = now;
    const { status } = refusal;
    this.why = working === 0 ? { kind: 'refused', status, waitMs: wait } : { kind: 'server-allows', count: known, status };
  }

  private judge(now: number, measured: Measured): void {
    const { count, rate } = measured;
    this.refusals.delivered();
    if (this.target === 0) this.target = 1;
    const base = this.base;
    if (!base && this.farStart && this.rttMs < this.options.farRttMs) {
      // Its first round trips were slow, not the server: give the far start back, half at a time while the rate holds.
      this.base = measured;
      this.hold(now, { kind: 'near-after-all', ms: this.rttMs });
      this.target = Math.ceil(count / 2);
      return;
    }
    if (!base || count === base.count) {
      this.base = measured;
      this.nextStep(now, count);
      return;
    }
    if (count > base.count) {
      const added = count - base.count;
      const gain = rate - base.rate;
      const share = gain / added / (base.rate / base.count);
      if (stepPays(base, measured, this.options)) {
        if (this.unconfirmed !== count && sharesDownload(base, measured, this.options)) {
          // Beside other servers one window can fake a gain (a burst of a shared line, another server's ramp);
          // two in a row rarely do.
          this.unconfirmed = count;
          this.why = { kind: 'step-unconfirmed', from: base.count, to: count, gain: gain / base.rate };
          return;
        }
        this.unconfirmed = undefined;
        this.refusals.surpassed(count);
        this.base = measured;
        this.plateauSince = undefined;
        this.grow(now, count, this.nextStepSize(count, added, share, (measured.downloadRate - base.downloadRate) / gain));
        if (this.target > count)
          this.why = { kind: 'step', from: base.count, to: count, gain: { kind: 'enough', server: gain / base.rate }, next: this.target };
        return;
      }
      this.unconfirmed = undefined;
      if (added > 1) {
        // Undo the step and try half of it.
        this.refining = true;
        this.target = base.count + Math.floor(added / 2);
        this.why = { kind: 'step', from: base.count, to: count, gain: stepGain(base, measured, this.options), next: this.target };
        return;
      }
      this.target = base.count;
      this.hold(now, { kind: 'one-more-short', count: base.count, gain: stepGain(base, measured, this.options) });
      return;
    }
    // A probe down from the plateau: keep the lower count if the rate held without the ones removed.
    const removed = base.count - count;
    const loss = base.rate - rate;
    if (loss >= (this.options.minShare * removed * base.rate) / base.count) {
      this.target = base.count;
      this.hold(now, { kind: 'each-pays', count: base.count });
      return;
    }
    // Given back; while that holds, give back twice as many, at most half of those left.
    this.base = measured;
    this.hold(now, { kind: 'gave-back', removed });
    this.target = Math.max(Math.ceil(count / 2), count - 2 * removed);
  }

  /**
   * How many connections the step after a paying one adds: as many again (doubling), or three times as many (to
   * four times) after a step that scaled almost linearly for the whole download too (a client or a line at its
   * limit takes from the other servers what this one gains, and busy moments fake the rest); one when the download
   * kept little more than the bar (a burst may have passed it); while refining, as many as the last step added.
   */
  private nextStepSize(count: number, added: number, share: number, netShare: number): number {
    if (this.refining) return added;
    if (netShare < this.options.doublingNetShare) return 1;
    return Math.min(share, netShare) >= this.options.linearShare ? 3 * count : count;
  }

  /** After a measurement at the target with nothing under test. */
  private nextStep(now: number, count: number): void {
    if (this.plateauSince === undefined) {
      this.grow(now, count, this.refining ? 1 : count);
      return;
    }
    if (now - this.plateauSince < this.options.reprobeMs) return;
    this.plateauSince = now;
    const up = this.nextProbeUp;
    this.nextProbeUp = !up;
    if (up && count < this.ceiling(now)) {
      this.refining = true;
      this.target = count + 1;
      this.plateauSince = undefined;
    } else if (!up && count > 1) {
      this.target = count - 1;
    }
  }

  private grow(now: number, count: number, step: number): void {
    const ceiling = this.ceiling(now);
    if (count >= ceiling) {
      this.hold(now, { kind: ceiling === this.options.max ? 'at-max' : 'at-server-limit', count: ceiling });
      return;
    }
    const base = this.base;
    if (base && endsBeforeWarm(this.remainingBytes, base.downloadRate, base.rate / base.count, this.rttMs, this.options)) {
      this.hold(now, { kind: 'ends-before-warm', count });
      return;
    }
    this.target = Math.min(ceiling, count + Math.max(1, step));
  }

  private hold(now: number, why: ConnectionsWhy): void {
    this.plateauSince = now;
    this.why = why;
  }

  /** The most the count may try now: the cap, and the server's limit until it is due for another try. */
  private ceiling(now: number): number {
    return this.refusals.ceiling(now, this.options.max);
  }
}
