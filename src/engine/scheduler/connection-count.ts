/**
 * How many connections one server gets (with HTTP/2: how many requests in flight on its one
 * connection), decided by measurement. Pure: no timers, no I/O; the caller passes the time.
 *
 * - Grow: start with `initial` (twice that for a far server, where each step costs a slow start of long
 *   round trips); once the count in use has had time to warm up (slow start: the round trips
 *   a new connection needs to reach the rate of the others) and carried enough bytes, judge the step that
 *   led to it, over the last window of observations; a step whose added connections already clearly pay is
 *   taken before they are warm (a far server's slow start takes a second). The added connections pay when
 *   together they raised the server's total rate by `minGain` (10 %: clear of the noise) and each brought
 *   at least `minShare` of an average connection's rate. While steps pay, the count doubles (quadruples
 *   after a step that scaled almost linearly), so a server that caps each connection gets its 16 within
 *   three steps; a step that does not pay is undone and half of it tried, down to one connection: the
 *   count settles where one more does not pay.
 * - Hold: at the plateau, every `reprobeMs` try one connection more (the server may have room again) or
 *   one fewer: if the rate holds without it, it is given back, and then twice as many, while it holds.
 * - Back off: a 429 or 503, or a connection refused or reset before the headers, means the server's limit
 *   is the number of connections that were working. It is remembered; nothing new is opened until
 *   Retry-After (or an exponential back-off) has passed; and the limit is tried again at most once per
 *   `limitReprobeMs`, doubling after each refusal, so a server that allows two never sees a storm.
 */

export interface ConnectionCountOptions {
  /** The cap (the user's maximum, or a per-site override): at most this many, ever. */
  max: number;
  initial: number;
  /** A step's added connections must raise the total rate by this share of it… */
  minGain: number;
  /** …and each bring at least this share of the average connection's rate. */
  minShare: number;
  /** After a doubling whose connections each brought this share, the next step quadruples. */
  linearShare: number;
  /**
   * Rates right after a change are not judged while slow start may still hold the connections back: at least
   * warmupMs, and the round trips it needs to reach their rate, at most warmupRtts (6: a window 64 × the initial one).
   */
  warmupMs: number;
  warmupRtts: number;
  /** Then the rate is averaged over max(measureMs, measureRtts round trips) and at least minMeasureBytes. */
  measureMs: number;
  measureRtts: number;
  minMeasureBytes: number;
  /** The round trip assumed until an observation gives one. */
  defaultRttMs: number;
  /** At the plateau, a probe one up or one down this often. */
  reprobeMs: number;
  /** Without Retry-After: the first back-off, doubled for each refusal in a row, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Past a server's remembered limit, one try this long after the refusal, doubled after each new one. */
  limitReprobeMs: number;
  /**
   * A server this far (its shortest round trip) starts with twice `initial`: each step waits out a slow
   * start of many long round trips, and a server that caps the total loses nothing to a few more.
   */
  farRttMs: number;
}

export const DEFAULT_CONNECTION_COUNT: ConnectionCountOptions = {
  max: 16,
  initial: 2,
  minGain: 0.1,
  minShare: 0.5,
  linearShare: 0.8,
  warmupMs: 100,
  warmupRtts: 6,
  measureMs: 150,
  measureRtts: 2,
  minMeasureBytes: 256 * 1024,
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
}

export interface Refusal {
  /** 429 or 503; undefined when the connection was refused or reset before any header. */
  status?: number;
  retryAfterMs?: number;
  /** Connections to this server that were working when it refused another one. */
  connections: number;
}

/** Bytes a connection in slow start may send in its first round trip (RFC 6928: 10 segments). */
const INITIAL_WINDOW_BYTES = 10 * 1460;

/** Since the count in use last changed: bytes received, and (time, bytes so far) at the observations of the last window. */
interface Measurement {
  connections: number;
  startedAt: number;
  bytes: number;
  samples: { at: number; bytes: number }[];
}

const percent = (share: number) => `${Math.round(share * 100)} %`;
const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export class ConnectionCount {
  private readonly options: ConnectionCountOptions;
  private target: number;
  /** The count and rate a change is judged against. */
  private base: { count: number; rate: number } | undefined;
  /** After a step that did not pay, steps no longer double. */
  private refining = false;
  private plateauSince: number | undefined;
  private nextProbeUp = true;
  private measurement: Measurement | undefined;
  private rttMs: number;
  private knownLimit: number | undefined;
  private blockedUntil = 0;
  private refusalsInRow = 0;
  private limitRefusals = 0;
  private limitProbeAt = 0;
  private why: string;
  /** Started with twice `initial` for a far server. */
  private farStart = false;

  constructor(options: Partial<ConnectionCountOptions> = {}) {
    this.options = { ...DEFAULT_CONNECTION_COUNT, ...options };
    const { max, initial } = this.options;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`the most connections per server must be a whole number ≥ 1, not ${max}`);
    this.target = Math.min(Math.max(1, initial), max);
    this.rttMs = this.options.defaultRttMs;
    this.why = `starting with ${plural(this.target, 'connection')}`;
  }

  /** Why the count is what it is, in plain words for the popup. */
  get reason(): string {
    return this.why;
  }

  /** The server's remembered limit (from a refusal), if any. */
  get serverLimit(): number | undefined {
    return this.knownLimit;
  }

  /**
   * How many connections may be open to this server now. 0 only while backing off from a refusal
   * that left no connection working: wait, then try one.
   */
  limit(now: number): number {
    return now < this.blockedUntil ? this.target : Math.max(1, this.target);
  }

  /** The server's total rate with `connections` transferring; call it regularly (e.g. with each progress tick). */
  observe(now: number, observation: RateObservation): void {
    if (observation.rttMs !== undefined && observation.rttMs > 0) {
      this.rttMs = observation.rttMs;
      this.startFar();
    }
    const m = this.measurement;
    if (!m || m.connections !== observation.connections) {
      this.measurement = { connections: observation.connections, startedAt: now, bytes: 0, samples: [{ at: now, bytes: 0 }] };
      return;
    }
    const last = m.samples.at(-1)!;
    m.bytes += (observation.totalRate * Math.max(0, now - last.at)) / 1000;
    m.samples.push({ at: now, bytes: m.bytes });
    // Judged only once the count asked for is the count in use (the caller may not have opened them all yet).
    if (m.connections !== this.limit(now) || m.connections === 0) return;
    const { measureMs, measureRtts, minMeasureBytes } = this.options;
    const window = Math.max(measureMs, measureRtts * this.rttMs);
    // The last window: the latest observations spanning `window` and holding `minMeasureBytes`. Bytes a busy
    // event loop did not read arrive in a burst after it: a window spans 3 times its longest gap between observations.
    const samples = m.samples;
    const enough = (from: number) => {
      let gap = 0;
      for (let i = from + 1; i < samples.length; i++) gap = Math.max(gap, samples[i]!.at - samples[i - 1]!.at);
      const span = now - samples[from]!.at;
      return span >= window && span >= 3 * gap && m.bytes - samples[from]!.bytes >= minMeasureBytes;
    };
    while (samples.length > 2 && enough(1)) samples.shift();
    if (!enough(0)) return;
    const first = samples[0]!;
    const rate = ((m.bytes - first.bytes) / (now - first.at)) * 1000;
    // The last window lies past the warm-up, or the step already pays while its connections still warm up,
    // each added one bringing almost an average connection's rate (a margin no busy moment of the client fakes).
    const base = this.base;
    const stepping = base !== undefined && m.connections > base.count;
    const perConnection = stepping ? base.rate / base.count : rate / m.connections;
    const warm = first.at - m.startedAt >= this.warmupMs(perConnection);
    if (!warm && !(stepping && this.pays(base, m.connections, rate, this.options.linearShare))) return;
    m.samples = [{ at: now, bytes: m.bytes }];
    this.judge(now, m.connections, rate);
  }

  /**
   * How long after a change rates are not judged: connections start in slow start (10 segments, doubling
   * each round trip): the round trips one needs to reach `perConnection` and one more (a step: what an average
   * connection carried before; else what each carries now: past that, slow start is not what holds them
   * back), at most `warmupRtts`.
   */
  private warmupMs(perConnection: number): number {
    const { warmupMs, warmupRtts } = this.options;
    const windows = (perConnection * this.rttMs) / 1000 / INITIAL_WINDOW_BYTES;
    const rtts = Math.min(warmupRtts, 1 + Math.max(1, Math.ceil(Math.log2(windows))));
    return Math.max(warmupMs, rtts * this.rttMs);
  }

  /** Whether `count` connections at `rate` pay for the ones added since `base`, each bringing `minShare` of an average one. */
  private pays(base: { count: number; rate: number }, count: number, rate: number, minShare = this.options.minShare): boolean {
    const added = count - base.count;
    const gain = rate - base.rate;
    // Each added connection's gain, as a share of what an average connection carried before.
    const share = gain / added / (base.rate / base.count);
    return gain >= this.options.minGain * base.rate && share >= minShare;
  }

  /** Doubles the first count once the server's round trip shows it far (before anything was judged or refused). */
  private startFar(): void {
    const { initial, max, farRttMs } = this.options;
    if (this.farStart || this.base || this.knownLimit !== undefined || this.rttMs < farRttMs || this.target !== Math.min(initial, max))
      return;
    this.farStart = true;
    this.target = Math.min(max, 2 * this.target);
    this.why = `a far server (${Math.round(this.rttMs)} ms away): starting with ${plural(this.target, 'connection')}`;
  }

  /** The server refused one more connection: 429/503, or refused or reset before the headers. */
  refused(now: number, refusal: Refusal): void {
    const working = Math.max(0, refusal.connections);
    const what = refusal.status === undefined ? 'closed a new connection before answering' : `answered ${refusal.status}`;
    const limit = Math.max(1, working);
    this.knownLimit = Math.min(limit, this.knownLimit ?? limit);
    // Refusals while already backing off (a step opened more than one) count once and do not extend it.
    const { backoffMs, maxBackoffMs, limitReprobeMs } = this.options;
    const inBurst = now < this.blockedUntil;
    if (!inBurst) {
      this.refusalsInRow++;
      this.limitRefusals++;
    }
    const wait = refusal.retryAfterMs ?? Math.min(maxBackoffMs, backoffMs * 2 ** (this.refusalsInRow - 1));
    if (!inBurst || refusal.retryAfterMs !== undefined) this.blockedUntil = Math.max(this.blockedUntil, now + wait);
    if (!inBurst) this.limitProbeAt = now + Math.max(wait, limitReprobeMs * 2 ** (this.limitRefusals - 1));
    this.target = working === 0 ? 0 : this.knownLimit;
    this.base = undefined;
    this.refining = true;
    this.plateauSince = now;
    this.why =
      working === 0
        ? `the server ${what}; waiting ${seconds(wait)} before trying again`
        : `the server allows ${plural(this.knownLimit, 'connection')}: it ${what} to one more`;
  }

  private judge(now: number, count: number, rate: number): void {
    this.refusalsInRow = 0;
    if (this.target === 0) this.target = 1;
    const base = this.base;
    if (!base && this.farStart && this.rttMs < this.options.farRttMs) {
      // Its first round trips were slow, not the server: no step from the doubled start until it is judged.
      this.base = { count, rate };
      this.hold(now, `steady at ${plural(count, 'connection')}`);
      return;
    }
    if (!base || count === base.count) {
      this.base = { count, rate };
      this.nextStep(now, count);
      return;
    }
    if (count > base.count) {
      const added = count - base.count;
      const gain = rate - base.rate;
      const share = gain / added / (base.rate / base.count);
      if (this.pays(base, count, rate)) {
        if (this.knownLimit !== undefined && count > this.knownLimit) {
          this.knownLimit = undefined;
          this.limitRefusals = 0;
        }
        this.base = { count, rate };
        this.plateauSince = undefined;
        // Doubling, or quadrupling after a step that scaled almost linearly (not the first: it has no reference).
        this.grow(now, count, this.refining ? added : share >= this.options.linearShare ? 3 * count : count);
        if (this.target > count)
          this.why = `${base.count} → ${count} connections raised the rate ${percent(gain / base.rate)}; trying ${this.target}`;
        return;
      }
      if (added > 1) {
        // Undo the step and try half of it.
        this.refining = true;
        this.target = base.count + Math.floor(added / 2);
        this.why = `${base.count} → ${count} connections raised the rate only ${percent(Math.max(0, gain) / base.rate)}; trying ${this.target}`;
        return;
      }
      this.target = base.count;
      this.hold(
        now,
        `steady at ${plural(base.count, 'connection')}: one more raised the rate only ${percent(Math.max(0, gain) / base.rate)}`,
      );
      return;
    }
    // A probe down from the plateau: keep the lower count if the rate held without the ones removed.
    const removed = base.count - count;
    const loss = base.rate - rate;
    if (loss >= (this.options.minShare * removed * base.rate) / base.count) {
      this.target = base.count;
      this.hold(now, `steady at ${plural(base.count, 'connection')}: each one pays`);
      return;
    }
    // Given back; while that holds, give back twice as many, at most half of those left.
    this.base = { count, rate };
    this.hold(now, `gave back ${plural(removed, 'connection')} that no longer raised the rate`);
    this.target = Math.max(Math.ceil(count / 2), count - 2 * removed);
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
      this.hold(
        now,
        ceiling === this.options.max
          ? `at the maximum of ${plural(ceiling, 'connection')}`
          : `at the server's limit of ${plural(ceiling, 'connection')}`,
      );
      return;
    }
    this.target = Math.min(ceiling, count + Math.max(1, step));
  }

  private hold(now: number, why: string): void {
    this.plateauSince = now;
    this.why = why;
  }

  /** The most the count may try now: the cap, and the server's limit until it is due for another try. */
  private ceiling(now: number): number {
    const { max } = this.options;
    if (this.knownLimit === undefined) return max;
    return Math.min(max, now >= this.limitProbeAt ? this.knownLimit + 1 : this.knownLimit);
  }
}
