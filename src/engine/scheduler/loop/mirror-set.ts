import { DownloadError } from '../../errors';
import type { ResponseFacts } from '../../http/response-facts';
import { plainHttpRefusal } from '../../http/request-trust';
import { advertisedSources, fetchMetalink, fromMetalinkFile } from '../../sources/advertised';
import { englishDrop, type DropReason } from '../../notice';
import { MAX_SOURCES } from '../../options';
import { describe, failureFacts, gaveUp } from '../../transfer-host';
import type { SourceHint } from '../../sources/hrw';
import { maxConnectionsFor } from '../connections/connection-cap';
import { MirrorState, type MirrorReport } from './mirror-state';
import { firstDifference } from './probe-bytes';
import { Provenance } from './provenance';
import { Reference } from './reference';
import type { SchedulerHost } from '../../transfer-host';

/** What the mirror set needs from the scheduler's loop. */
export interface MirrorSetEvents {
  /** `mirror` was dropped: cut its requests; fail the run when nobody is left. */
  dropped(mirror: MirrorState, error: DownloadError): void;
  /** Bytes an unchecked mirror stored must be forgotten. */
  discard(start: number, end: number): void;
  /** New mirrors: hand out work. */
  grew(): void;
}

/**
 * The file's sources: every mirror's state, the primary's first bytes they are checked
 * against (a mirror serving other bytes is dropped, and what it stored on trust discarded),
 * who stored what, and mirrors advertised by the primary or a Metalink file.
 */
export class MirrorSet {
  mirrors: MirrorState[] = [];
  reference = new Reference();
  provenance = new Provenance();
  /** Mirrors found to serve another file; they stay out across restarts. */
  readonly excluded = new Map<string, DropReason>();
  private lastReportAt = 0;
  /** Requests waiting for their mirror to be checked (guessed first blocks). */
  private checkWaiters: Array<{ mirror: MirrorState; resolve: () => void }> = [];

  constructor(
    private readonly host: SchedulerHost,
    private readonly events: MirrorSetEvents,
    private readonly signal: AbortSignal,
  ) {}

  /** Starts afresh from the job's sources (a new run, or a restart from zero). */
  reset(): void {
    this.mirrors = [...new Set(this.host.sources)].map((url, i) => this.newMirror(i, url));
    const covered = this.covered();
    for (const mirror of this.mirrors) {
      const excluded = this.excluded.get(mirror.url);
      const plainHttp = !covered && !excluded && plainHttpRefusal(mirror.url, this.host.url) !== undefined;
      if (plainHttp) this.host.notice({ kind: 'not-used', url: mirror.url, why: { kind: 'plain-http' } });
      const why: DropReason | undefined = excluded ?? (plainHttp ? { kind: 'plain-http' } : undefined);
      if (why) mirror.drop(why);
    }
    this.reference = new Reference();
    this.provenance = new Provenance();
  }

  private newMirror(id: number, url: string): MirrorState {
    const { options } = this.host;
    const max = maxConnectionsFor(url, options.maxConnectionsPerServer, options.maxConnectionsPerSite);
    const mirror = new MirrorState(id, url, id === 0, { max, initial: Math.min(max, options.connectionsPerServer) }, options.clock);
    mirror.hint = this.host.sourceHint(url);
    return mirror;
  }

  /** Body bytes received from every mirror so far. */
  get bytesReceived(): number {
    return this.mirrors.reduce((sum, m) => sum + m.bytes, 0);
  }

  get primary(): MirrorState {
    return this.mirrors[0]!;
  }

  /** The primary's first bytes are not in yet. */
  get referencePending(): boolean {
    return !this.reference.bytesIfReady();
  }

  /** Compares a mirror's probe with the primary's first bytes: it becomes active, or is dropped. */
  judgeProbe(mirror: MirrorState): void {
    const probe = mirror.probe;
    const reference = this.reference.bytesIfReady();
    if (!probe || !reference) return;
    mirror.probe = undefined;
    if (probe.size !== this.reference.size) {
      // The reference is ready only once its size is known.
      const why: DropReason = { kind: 'other-size', size: probe.size, expected: this.reference.size! };
      return this.drop(mirror, why, new DownloadError('bad-length', englishDrop(why)));
    }
    const difference = firstDifference(probe.bytes, reference);
    if (difference !== undefined) {
      const why: DropReason = { kind: 'other-bytes', at: difference, primary: this.primary.url };
      return this.drop(mirror, why, new DownloadError('bad-range', englishDrop(why)));
    }
    this.admit(mirror, 'active');
  }

  /** `mirror` may store bytes from now on: checked (active), or working on trust until it is (tentative). */
  admit(mirror: MirrorState, phase: 'tentative' | 'active'): void {
    mirror.phase = phase;
    this.report(true);
    const ready = this.checkWaiters.filter((w) => w.mirror === mirror);
    this.checkWaiters = this.checkWaiters.filter((w) => w.mirror !== mirror);
    for (const w of ready) w.resolve();
  }

  /** Resolves once `mirror` may store bytes (at once if it may); rejects with the reason `signal` aborts with. */
  admitted(mirror: MirrorState, signal: AbortSignal): Promise<void> {
    if (mirror.phase === 'active' || mirror.phase === 'tentative') return Promise.resolve();
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const aborted = () => {
        this.checkWaiters = this.checkWaiters.filter((w) => w !== waiter);
        reject(signal.reason as Error);
      };
      const waiter = {
        mirror,
        resolve: () => {
          signal.removeEventListener('abort', aborted);
          resolve();
        },
      };
      this.checkWaiters.push(waiter);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }

  /** Takes the primary's bytes; once its first bytes are in, every mirror that started on trust is judged. */
  offerReference(offset: number, chunk: Uint8Array): void {
    if (!this.referencePending) return;
    this.reference.offer(offset, chunk);
    if (this.referencePending) return;
    for (const mirror of this.mirrors) if (mirror.phase === 'tentative') this.judgeProbe(mirror);
  }

  /** Stops using a mirror, forgetting what it stored on trust. */
  drop(mirror: MirrorState, why: DropReason, error: DownloadError): void {
    if (mirror.phase === 'dropped') return;
    mirror.drop(why);
    if (mirror.untrusted) for (const r of this.provenance.takeFrom(mirror)) this.events.discard(r.start, r.end);
    if (this.mirrors.length > 1) this.host.notice({ kind: 'dropped', url: mirror.url, primary: mirror.isPrimary, why });
    this.report(true);
    this.events.dropped(mirror, error);
  }

  /**
   * A request failed before any byte, while `working` other requests of the mirror were open. While they work,
   * the server refused one more: the connection count remembers its limit, and the mirror goes on. With none
   * working, it backs off, and is dropped after too many failures in a row.
   */
  failedBeforeBytes(
    mirror: MirrorState,
    error: unknown,
    retryAfterMs: number | undefined,
    status: number | undefined,
    working: number,
  ): void {
    const { options } = this.host;
    const now = options.clock.now();
    // A busy answer says where the server's limit is; an extra connection closed while others work may (the
    // mirror tells a refusal from a reset once it sees whether the others broke too).
    const busy = status === 429 || status === 503;
    if (busy) mirror.connectionCount.refused(now, { status, retryAfterMs, connections: working });
    if (status === undefined && working > 0) mirror.closedBeforeAnswering(now, working);
    if ((busy || status === undefined) && working > 0) return;
    mirror.lastFailure = failureFacts(error);
    mirror.failed(now, options.retryBaseMs, options.retryMaxMs, retryAfterMs);
    if (mirror.failuresInARow >= options.maxAttemptsWithoutProgress) {
      const given = gaveUp(mirror.failuresInARow, error);
      return this.drop(mirror, { kind: 'failed', failure: given.facts, message: given.message }, given);
    }
    // Reported at once: the pages show each attempt as it fails, and when Stitch will give up.
    this.report(true);
  }

  /** The error when no usable source is left, or undefined while one is. */
  exhausted(error: DownloadError): DownloadError | undefined {
    if (this.mirrors.some((m) => m.phase === 'active')) return undefined;
    if (this.mirrors.length === 1) return error;
    const reasons = this.mirrors.map((m) => `${m.url}: ${m.dropReason ? englishDrop(m.dropReason) : 'not checked yet'}`).join('; ');
    return new DownloadError(error.code, `no usable source is left (${reasons})`, false, undefined, error.status, error.more);
  }

  /** Adds the mirrors the primary advertises, and reads any Metalink file it points to. */
  async followAdvertised(facts: ResponseFacts, url: string): Promise<void> {
    const advertised = advertisedSources(facts, facts.link ?? null, url);
    const [first] = advertised.refused;
    if (first) this.host.notice({ kind: 'sources-refused', from: 'server', count: advertised.refused.length, first });
    if (advertised.mirrors.length > 0) await this.add(advertised.mirrors, 'server', advertised.hints);
    for (const metalink of advertised.metalinks) {
      fetchMetalink(metalink, this.host.options.fetch, this.signal)
        .then(async (files) => {
          const name = this.host.file?.filename;
          const file = files.length === 1 ? files[0] : files.find((f) => f.name.split('/').pop() === name);
          if (!file) throw new Error(`the Metalink file ${metalink} does not describe ${name}`);
          const trust = { primaryUrl: url, covered: this.covered() };
          const { urls, hints, expected, refused } = fromMetalinkFile(file, `the Metalink file ${metalink}`, trust);
          if (refused[0]) this.host.notice({ kind: 'sources-refused', from: 'metalink', count: refused.length, first: refused[0] });
          await this.host.addExpected(expected);
          await this.add(urls, 'metalink', hints);
        })
        .catch((error: unknown) => {
          if (!this.signal.aborted) this.host.notice({ kind: 'metalink-unread', message: describe(error) });
        });
    }
  }

  /**
   * Whether digests or piece hashes cover every byte of the file: the user's, an https Metalink
   * file's (an http one is refused for an https download), or the primary's own headers.
   */
  private covered(): boolean {
    return this.host.knownDigests().length > 0 || this.host.expectedPieces() !== undefined;
  }

  private async add(urls: string[], from: 'server' | 'metalink', hints: Record<string, SourceHint>): Promise<void> {
    const fresh = urls.filter((url) => !this.mirrors.some((m) => m.url === url));
    if (fresh.length === 0) return;
    const kept = await this.host.addSources(fresh, hints);
    for (const url of kept) this.mirrors.push(this.newMirror(this.mirrors.length, url));
    this.host.notice({ kind: 'more-mirrors', from, count: fresh.length, kept: kept.length, max: MAX_SOURCES });
    if (kept.length === 0) return;
    this.report(true);
    this.events.grew();
  }

  /** Tells the job every mirror's share and health, at most every progress interval unless forced. */
  report(force: boolean): void {
    const now = this.host.options.clock.now();
    if (!force && now - this.lastReportAt < this.host.options.progressIntervalMs) return;
    this.lastReportAt = now;
    const maxFailures = this.host.options.maxAttemptsWithoutProgress;
    this.host.mirrorsChanged(this.mirrors.map((m): MirrorReport => ({ ...m.report(), maxFailures })));
  }
}
