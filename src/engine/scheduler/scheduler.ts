import { isQuotaError } from '../store';
import type { ByteRange } from '../ranges';
import { BlockWriter } from '../block-writer';
import { DownloadError } from '../errors';
import { openExchange, receiveBody, StallError, type Exchange } from '../http/exchange';
import type { Ask } from '../http/response-check';
import type { ResponseFacts } from '../http/response-facts';
import { ifRangeValidator } from '../remote-file';
import { hrwOrder } from '../sources/hrw';
import { describe, describeFile, storageFull, type TransferHost } from '../transfer';
import { WriteGate } from '../write-gate';
import { BlockWindow, DeadlineEstimator } from './estimators';
import { MirrorState, type MirrorReport } from './mirror-state';
import { Plan } from './plan';
import { Reference } from './reference';
import { FallbackToStream, LOST, MirrorProblem, RestartAll, YIELDED } from './outcomes';
import { PieceGuard } from './piece-guard';
import { firstDifference, readAll } from './probe-bytes';
import { Provenance } from './provenance';
import { vetResponse } from './vet-response';
import { advertisedSources, fetchMetalink, fromMetalinkFile } from '../sources/advertised';
import { hexDigestsContradict, toHexDigests, type HexDigest, type PieceHashes } from '../integrity/expected';
import type { Segment } from '../integrity/reverify';
import type { ExpectedIntegrity } from '../job-state';

/** What the scheduler needs beyond a single-source transfer: every URL of the file. */
export interface SchedulerHost extends TransferHost {
  /** The file's URLs, primary (the one the user asked for) first. */
  readonly sources: readonly string[];
  mirrorsChanged(reports: MirrorReport[]): void;
  /** Remembers more URLs of the file (from Link headers or a Metalink file). */
  addSources(urls: string[]): Promise<void>;
  /** Adds digests or piece hashes learned during the download. */
  addExpected(expected: ExpectedIntegrity): Promise<void>;
  /** Every digest known for the file so far. */
  knownDigests(): HexDigest[];
  /** Piece hashes known for the file (Metalink), if any. */
  expectedPieces(): PieceHashes | undefined;
  /** Stored bytes of [start, end) were discarded (they failed a hash). */
  discarded(start: number, end: number): void;
  /** While a player is attached: the byte it plays and how far ahead is urgent. */
  playback(): Playback | undefined;
}

/** A player's position: bytes [position, position + aheadBytes) are needed first. */
export interface Playback {
  position: number;
  aheadBytes: number;
}

const INITIAL_BLOCK = 512 * 1024;
const DISCOVERY_BLOCK = 1024 * 1024;
/** The first block while a player waits: small, so the first frame comes soon. */
const DISCOVERY_BLOCK_PLAYING = 256 * 1024;
const URGENT_MIN_BLOCK = 64 * 1024;
/** Record size for bytes a player waits for. */
const STREAM_RECORD = 128 * 1024;
const URGENT_MAX_BLOCK = 512 * 1024;
const TICK_MS = 50;
/** A request that received nothing for this long when its deadline passed is stalling. */
const SILENT_MS = 1000;

/** Copies of one block in flight; the first to reach `end` wins and the others are aborted. */
interface Group {
  end: number;
  /** Just ahead of the playback position: fastest mirror first, hedged early. */
  urgent?: boolean;
  fetches: Set<BlockFetch>;
  /** Requests made for these bytes so far (for deadline backoff). */
  attempts: number;
  missedDeadline: boolean;
}

interface BlockFetch {
  kind: 'block' | 'probe';
  mirror: MirrorState;
  start: number;
  /** Next byte expected. */
  pos: number;
  group: Group;
  issuedAt: number;
  lastByteAt: number;
  expectedMs: number | undefined;
  deadline: number;
  controller: AbortController;
  writer?: BlockWriter;
}

/**
 * Dynamic parallel access (Rodriguez & Biersack) with CoBlitz's deadlines and block window:
 * every usable mirror keeps up to `connectionsPerServer` block requests in flight, a mirror
 * that finishes gets the next unrequested block, blocks past their deadline are re-requested
 * on another mirror, and in the end game idle mirrors duplicate the slowest blocks. A single
 * mirror is the special case where two overlapping requests hide each reset.
 */
export class MirrorScheduler {
  private mirrors: MirrorState[] = [];
  private plan: Plan | undefined;
  private readonly active = new Set<BlockFetch>();
  private readonly deadlines = new DeadlineEstimator();
  private window = new BlockWindow(1, 1);
  private reference = new Reference();
  private readonly gate: WriteGate;
  private failure: unknown;
  private settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastReportAt = 0;
  private provenance = new Provenance();
  private pieces: PieceGuard | undefined;
  /** Mirrors found to serve another file; they stay out across restarts. */
  private readonly excluded = new Map<string, string>();

  constructor(
    private readonly host: SchedulerHost,
    private readonly signal: AbortSignal,
  ) {
    this.gate = new WriteGate(host.store.writeConcurrency);
  }

  /** Resolves when the file is complete, or with 'fallback' when one stream must do it. */
  async run(): Promise<'done' | 'fallback'> {
    for (;;) {
      try {
        await this.runOnce();
        return 'done';
      } catch (error) {
        if (error instanceof FallbackToStream) {
          // Bytes mirrors stored before the primary answered were never checked against it.
          if (!this.host.file) await this.host.store.clearBytes(this.host.jobId);
          return 'fallback';
        }
        if (!(error instanceof RestartAll)) throw error;
        await this.host.restart(error.message, 'changed');
      }
    }
  }

  private async runOnce(): Promise<void> {
    const { host } = this;
    const urls = [...new Set(host.sources)];
    this.mirrors = urls.map((url, i) => new MirrorState(i, url, i === 0));
    for (const mirror of this.mirrors) {
      const reason = this.excluded.get(mirror.url);
      if (reason) mirror.drop(reason);
    }
    this.failure = undefined;
    this.plan = undefined;
    this.reference = new Reference();
    this.provenance = new Provenance();
    this.pieces = undefined;
    const file = host.file;
    if (file?.size !== undefined) await this.startPlan(file.size);
    const depth = this.depth();
    const maxWindow = Math.max(2, Math.min(this.mirrors.length * (depth + 1), Math.floor(host.options.maxBufferBytes / host.store.blockSize)));
    this.window = new BlockWindow(Math.min(this.mirrors.length, host.options.maxMirrors) * depth + 1, maxWindow);
    const done = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    const onAbort = () => this.fail(this.signal.reason);
    this.signal.addEventListener('abort', onAbort, { once: true });
    this.timer = setInterval(() => this.tick(), TICK_MS);
    try {
      this.pump();
      await done;
    } finally {
      clearInterval(this.timer);
      this.signal.removeEventListener('abort', onAbort);
      this.reportMirrors(true);
    }
  }

  private async startPlan(size: number): Promise<void> {
    const stored = await this.host.store.storedRanges(this.host.jobId);
    this.plan = new Plan(size, stored);
    this.reference.setSize(size);
    if (this.plan.covers(0, this.reference.length)) {
      await this.reference.loadFrom(this.host.store.read(this.host.jobId, 0, this.reference.length));
    }
  }

  private depth(): number {
    return Math.min(6, Math.max(1, this.host.options.connectionsPerServer));
  }

  // ---- assignment -------------------------------------------------------------------------

  /** Hands out work until every usable mirror is busy or the window is full. */
  private pump(): void {
    if (this.failure !== undefined || this.trySettle()) return;
    const now = Date.now();
    const plan = this.plan;
    this.discover(now);
    if (!plan) return;
    // While the player's next bytes are not all requested, nothing else starts.
    if (!this.assignUrgent(plan, now)) return;
    const playback = this.host.playback();
    for (let assigned = true; assigned; ) {
      assigned = false;
      for (const mirror of this.candidates(now)) {
        if (!this.window.allows(this.blockFetches())) return;
        // With a player attached, far blocks stay short so they never hold up a seek for long.
        const bytes = playback ? Math.min(this.blockBytes(mirror, plan), playback.aheadBytes / 2) : this.blockBytes(mirror, plan);
        const block = plan.nextBlock(this.claims(), bytes, playback ? playback.position + playback.aheadBytes : 0);
        if (block) {
          this.issue(mirror, block.start, { end: block.end, fetches: new Set(), attempts: 0, missedDeadline: false });
          assigned = true;
        } else if (this.duplicateSlowest(mirror)) {
          assigned = true;
        }
      }
    }
  }

  /**
   * Streaming priority (CoBlitz's in-order delivery): the bytes just ahead of the playback
   * position go first, nearest first, in small blocks (a quarter second at the mirror's rate),
   * to the fastest mirrors, at most two per mirror so the nearest block is not slowed by the
   * ones after it. Far blocks already in flight finish; a seek just moves the position. Returns
   * whether every byte of the window is stored or requested, so the rest may proceed.
   */
  private assignUrgent(plan: Plan, now: number): boolean {
    const playback = this.host.playback();
    if (!playback) return true;
    const windowEnd = Math.min(plan.size, playback.position + playback.aheadBytes);
    this.focusOn(playback.position, windowEnd);
    const nextInWindow = (bytes: number) => {
      const block = plan.nextBlock(this.claims(), bytes, playback.position);
      return block && block.start >= playback.position && block.start < windowEnd ? block : undefined;
    };
    // Urgent requests may go past the usual connections per server, within the browsers' six.
    const room = Math.min(6, this.depth() + 2);
    for (let assigned = true; assigned; ) {
      assigned = false;
      const fastest = this.mirrors.filter((m) => m.usable(now) && m.inFlight < room).sort((a, b) => b.rate() - a.rate());
      for (const mirror of fastest) {
        if (this.urgentOn(mirror) >= 2 || !this.window.allows(this.blockFetches())) continue;
        const bytes = Math.min(URGENT_MAX_BLOCK, Math.max(URGENT_MIN_BLOCK, mirror.rate() / 4));
        const block = nextInWindow(bytes);
        if (!block) return true;
        this.issue(mirror, block.start, { end: block.end, fetches: new Set(), attempts: 0, missedDeadline: false, urgent: true });
        assigned = true;
      }
    }
    if (nextInWindow(1) === undefined) return true;
    this.yieldFarBlocks(playback.position, windowEnd);
    return false;
  }

  /**
   * Inside the player's window only the two nearest requests per mirror go on, storing what
   * they receive every 128 KiB so the player can use it at once; the others are cut where
   * they are and their rest is requested again nearest first, in small blocks.
   */
  private focusOn(start: number, end: number): void {
    const referencePending = !this.reference.bytesIfReady();
    const inWindow = new Map<MirrorState, BlockFetch[]>();
    for (const f of this.active) {
      if (f.kind !== 'block' || f.group.end <= start || f.start >= end) continue;
      inWindow.set(f.mirror, [...(inWindow.get(f.mirror) ?? []), f]);
    }
    for (const fetches of inWindow.values()) {
      fetches.sort((a, b) => a.pos - b.pos);
      fetches.forEach((f, i) => {
        if (i < 2) {
          if (f.writer) f.writer.recordBytes = STREAM_RECORD;
        } else if (!f.group.urgent && !(referencePending && f.mirror.isPrimary)) {
          f.controller.abort(YIELDED);
        }
      });
    }
  }

  /**
   * Far blocks give their bandwidth to the player's: each is cut at the byte it has reached
   * (what it received is stored, its rest goes back to the pool), so nothing is fetched twice.
   */
  private yieldFarBlocks(start: number, end: number): void {
    const referencePending = !this.reference.bytesIfReady();
    for (const f of this.active) {
      const far = f.kind === 'block' && !f.group.urgent && (f.group.end <= start || f.start >= end);
      if (far && !(referencePending && f.mirror.isPrimary)) f.controller.abort(YIELDED);
    }
  }

  private urgentOn(mirror: MirrorState): number {
    let n = 0;
    for (const f of this.active) if (f.mirror === mirror && f.group.urgent) n++;
    return n;
  }

  /** Hands out work at once (a seek moved the playback position). */
  wake(): void {
    if (this.settle) this.pump();
  }

  /**
   * The primary's first block tells the size and gives the reference bytes every mirror is
   * checked against; until both are known it is re-requested whenever it is not in flight.
   */
  private discover(now: number): void {
    const primary = this.mirrors[0]!;
    const needed = !this.plan || !this.reference.bytesIfReady();
    if (needed && primary.usable(now) && primary.inFlight === 0) {
      const first = this.host.playback() ? DISCOVERY_BLOCK_PLAYING : DISCOVERY_BLOCK;
      const end = Math.min(first, this.plan?.size ?? first);
      this.issue(primary, 0, { end, fetches: new Set(), attempts: 0, missedDeadline: false });
    }
    this.probeMirrors(now);
  }

  /**
   * Checks mirrors in HRW order over (file, mirror) until `maxMirrors` are active or being
   * checked: every client of a file tries the same few mirrors first (warm caches, even
   * load), and a failing one makes room for the next.
   */
  private probeMirrors(now: number): void {
    const live = (m: MirrorState) => m.phase === 'active' || m.phase === 'tentative' || (m.phase === 'probing' && m.inFlight > 0);
    let slots = this.host.options.maxMirrors - this.mirrors.filter(live).length;
    const waiting = this.mirrors.filter((m) => m.phase === 'probing' && m.inFlight === 0);
    for (const mirror of hrwOrder(waiting, (m) => m.url, this.host.url)) {
      if (slots <= 0) return;
      if (now < mirror.backoffUntil) continue;
      this.probe(mirror);
      slots--;
    }
  }

  /**
   * Mirrors that may take a block now: the first `maxMirrors` usable ones in HRW order over
   * (file, mirror) with the primary always in, least loaded and nearest first.
   */
  private candidates(now: number): MirrorState[] {
    const depth = this.depth();
    const usable = this.mirrors.filter((m) => m.usable(now));
    const primary = usable.filter((m) => m.isPrimary);
    const others = hrwOrder(usable.filter((m) => !m.isPrimary), (m) => m.url, this.host.url);
    const chosen = [...primary, ...others].slice(0, this.host.options.maxMirrors);
    const minRtt = Math.max(1, Math.min(...chosen.map((m) => m.rttMs ?? Infinity)));
    const cost = (m: MirrorState) => ((m.inFlight + 1) / depth) * Math.max(1, (m.rttMs ?? minRtt) / minRtt);
    return chosen.filter((m) => m.inFlight < depth).sort((a, b) => cost(a) - cost(b));
  }

  /** Block size for `mirror`: long against its round trip, shrinking near the end. */
  private blockBytes(mirror: MirrorState, plan: Plan): number {
    const { options } = this.host;
    const rate = mirror.rate();
    const seconds = Math.max(options.blockSeconds, (4 * (mirror.rttMs ?? 0)) / 1000);
    let bytes = rate > 0 ? (rate / this.depth()) * seconds : INITIAL_BLOCK;
    const unclaimed = plan.unclaimed(this.claims()).reduce((sum, r) => sum + r.end - r.start, 0);
    const busyMirrors = Math.max(1, this.mirrors.filter((m) => m.phase === 'active' || m.phase === 'tentative').length);
    bytes = Math.min(bytes, unclaimed / (2 * busyMirrors));
    return Math.min(options.maxBlockBytes, Math.max(options.minBlockBytes, bytes));
  }

  /** End game: re-request the slowest block's remainder where it would arrive sooner. */
  private duplicateSlowest(mirror: MirrorState): boolean {
    let best: { fetch: BlockFetch; gain: number } | undefined;
    const referencePending = !this.reference.bytesIfReady();
    for (const fetch of this.active) {
      if (fetch.kind !== 'block' || fetch.mirror === mirror || fetch.group.fetches.size >= 2) continue;
      // The primary's first block must arrive from the primary: it is the reference.
      if (referencePending && fetch.mirror.isPrimary) continue;
      const remaining = fetch.group.end - fetch.pos;
      if (remaining <= 0) continue;
      const theirRate = fetch.mirror.rate() / Math.max(1, fetch.mirror.inFlight);
      // A request still waiting for its first byte has a round trip to go first.
      const waiting = fetch.pos === fetch.start ? Math.max(0, fetch.issuedAt + (fetch.mirror.rttMs ?? 0) - Date.now()) : 0;
      const theirMs = theirRate > 0 ? waiting + (remaining * 1000) / theirRate : Infinity;
      const myRate = mirror.rate() / (mirror.inFlight + 1);
      const myMs = (mirror.rttMs ?? 0) + (myRate > 0 ? (remaining * 1000) / myRate : (remaining * 1000) / Math.max(theirRate, 1));
      const gain = theirMs - myMs;
      if (myMs < 0.75 * theirMs && gain > (best?.gain ?? 0)) best = { fetch, gain };
    }
    if (!best) return false;
    this.issue(mirror, best.fetch.pos, best.fetch.group);
    return true;
  }

  private probe(mirror: MirrorState): void {
    const end = this.plan ? this.reference.length : Reference.PROBE_BYTES;
    this.issue(mirror, 0, { end, fetches: new Set(), attempts: 0, missedDeadline: false }, 'probe');
  }

  private issue(mirror: MirrorState, start: number, group: Group, kind: BlockFetch['kind'] = 'block'): void {
    const now = Date.now();
    const rate = mirror.rate() / (mirror.inFlight + 1);
    const expectedMs = rate > 0 ? (mirror.rttMs ?? 0) + ((group.end - start) * 1000) / rate : undefined;
    const fetch: BlockFetch = {
      kind,
      mirror,
      start,
      pos: start,
      group,
      issuedAt: now,
      lastByteAt: now,
      expectedMs,
      deadline: now + this.deadlines.timeoutMs(expectedMs, group.attempts) * (group.urgent ? 0.5 : 1),
      controller: new AbortController(),
    };
    group.attempts++;
    group.fetches.add(fetch);
    mirror.inFlight++;
    mirror.requests++;
    this.active.add(fetch);
    void this.runFetch(fetch).finally(() => {
      this.active.delete(fetch);
      fetch.group.fetches.delete(fetch);
      mirror.inFlight--;
      this.pump();
      this.trySettle();
    });
  }

  private blockFetches(): number {
    let n = 0;
    for (const f of this.active) if (f.kind === 'block') n++;
    return n;
  }

  /** Bytes requests in flight will deliver (including what they buffered). */
  private claims(): ByteRange[] {
    const claims: ByteRange[] = [];
    for (const f of this.active) if (f.kind === 'block') claims.push({ start: f.start, end: f.group.end });
    return claims;
  }

  // ---- one request --------------------------------------------------------------------------

  private async runFetch(fetch: BlockFetch): Promise<void> {
    const { host } = this;
    const onAbort = () => fetch.controller.abort(this.signal.reason);
    this.signal.addEventListener('abort', onAbort, { once: true });
    const writer = new BlockWriter(host.store, host.jobId, this.gate, (start, end) => {
      if (fetch.mirror.untrusted) return void this.discardBytes(start, end);
      this.plan?.addStored(start, end);
      this.provenance.add(start, end, fetch.mirror);
      host.stored(start, end);
    });
    fetch.writer = writer;
    if (fetch.group.urgent) writer.recordBytes = STREAM_RECORD;
    let exchange: Exchange | undefined;
    try {
      const ask: Ask = { start: fetch.start, end: fetch.group.end, ranged: true };
      const validator = fetch.kind === 'probe' ? undefined : this.validatorFor(fetch.mirror);
      if (ask.end === 0) return this.blockDone(fetch);
      exchange = await openExchange(fetch.mirror.url, ask, validator, host.options, fetch.controller.signal);
      fetch.mirror.observeRtt(exchange.headersMs);
      const target = await this.accept(fetch, ask, exchange.facts);
      if (fetch.kind === 'probe') {
        await this.finishProbe(fetch, exchange, target.size);
        return;
      }
      await receiveBody(exchange, target, writer, (chunk, offset) => this.onChunk(fetch, chunk, offset), host.options.rateLimiter);
      await writer.flush();
      if (fetch.pos >= fetch.group.end) this.blockDone(fetch);
      fetch.mirror.failuresInARow = 0;
    } catch (caught) {
      const error = fetch.controller.signal.aborted ? fetch.controller.signal.reason : exchange?.signal.aborted ? exchange.signal.reason : caught;
      await writer.flush().catch((flushError: unknown) => this.fail(isQuotaError(flushError) ? storageFull(writer.stored) : flushError));
      this.fetchFailed(fetch, error, writer.stored > 0 || fetch.pos > fetch.start);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
      await exchange?.close();
    }
  }

  private validatorFor(mirror: MirrorState): string | undefined {
    if (mirror.isPrimary) return this.host.file && ifRangeValidator(this.host.file);
    return mirror.etag ?? mirror.lastModified;
  }

  private onChunk(fetch: BlockFetch, chunk: Uint8Array, offset: number): void {
    const now = Date.now();
    fetch.lastByteAt = now;
    fetch.pos = Math.min(fetch.group.end, offset + chunk.length);
    fetch.mirror.received(chunk.length, now);
    this.host.received(chunk.length);
    if (fetch.mirror.isPrimary && !this.reference.bytesIfReady()) {
      this.reference.offer(offset, chunk);
      this.confirmTentative();
    }
    this.reportMirrors(false);
  }

  /** Checks a response before a byte of it is used; returns where its body goes. */
  private async accept(fetch: BlockFetch, ask: Ask, facts: ResponseFacts): Promise<{ start: number; end?: number; size?: number }> {
    const { host } = this;
    const mirror = fetch.mirror;
    const discovering = !host.file;
    const verdict = vetResponse(facts, ask, {
      isPrimary: mirror.isPrimary,
      file: host.file,
      size: host.file?.size ?? this.plan?.size,
      mirrorValidators: { etag: mirror.etag, lastModified: mirror.lastModified },
      othersLeft: this.mirrors.some((m) => !m.isPrimary && m.phase !== 'dropped'),
    });
    if (discovering && mirror.isPrimary && verdict.size !== undefined) {
      if (this.plan && this.plan.size !== verdict.size) {
        const reason = `it serves a file of ${this.plan.size} bytes, not ${verdict.size}`;
        for (const m of this.mirrors) if (m.phase === 'tentative') this.excluded.set(m.url, reason);
        throw new RestartAll(`the mirrors that answered first serve a file of ${this.plan.size} bytes, the primary one of ${verdict.size}`);
      }
      await host.setFile(describeFile(host, facts, verdict.size, true));
      if (!this.plan) await this.startPlan(verdict.size);
      this.trimDiscovery(fetch);
      await this.followAdvertised(facts, mirror.url);
      queueMicrotask(() => this.pump());
    }
    if (fetch.kind === 'probe') {
      mirror.etag = facts.etag;
      mirror.lastModified = facts.lastModified;
      if (hexDigestsContradict(toHexDigests(facts.digests, mirror.url), host.knownDigests())) {
        throw new MirrorProblem('it announces a different digest for the file', 'verify');
      }
    }
    return verdict;
  }

  /** Adds the mirrors the primary advertises, and reads any Metalink file it points to. */
  private async followAdvertised(facts: ResponseFacts, url: string): Promise<void> {
    const advertised = advertisedSources(facts, facts.link ?? null, url);
    if (advertised.mirrors.length > 0) await this.addMirrors(advertised.mirrors, 'the server');
    for (const metalink of advertised.metalinks) {
      fetchMetalink(metalink, this.host.options.fetch, this.signal)
        .then(async (files) => {
          const name = this.host.file?.filename;
          const file = files.length === 1 ? files[0] : files.find((f) => f.name.split('/').pop() === name);
          if (!file) throw new Error(`the Metalink file ${metalink} does not describe ${name}`);
          const { urls, expected } = fromMetalinkFile(file, `the Metalink file ${metalink}`);
          await this.host.addExpected(expected);
          await this.addMirrors(urls, 'the Metalink file');
        })
        .catch((error: unknown) => {
          if (!this.signal.aborted) this.host.notice(`ignored a Metalink description: ${describe(error)}`);
        });
    }
  }

  private async addMirrors(urls: string[], from: string): Promise<void> {
    const fresh = urls.filter((url) => !this.mirrors.some((m) => m.url === url));
    if (fresh.length === 0) return;
    await this.host.addSources(fresh);
    for (const url of fresh) this.mirrors.push(new MirrorState(this.mirrors.length, url, false));
    this.host.notice(`${from} named ${fresh.length} more mirror${fresh.length > 1 ? 's' : ''}`);
    this.reportMirrors(true);
    this.pump();
  }

  /** The discovery request asked for a fixed first block: smaller files end sooner. */
  private trimDiscovery(fetch: BlockFetch): void {
    if (this.plan && fetch.group.end > this.plan.size) fetch.group.end = this.plan.size;
  }

  /**
   * A probe's bytes must equal the primary's: otherwise the mirror serves another file. When
   * the primary has not answered yet (a far origin, near mirrors), the mirror starts working
   * at once on trust, and is checked as soon as the primary's first bytes arrive.
   */
  private async finishProbe(fetch: BlockFetch, exchange: Exchange, size: number | undefined): Promise<void> {
    const mirror = fetch.mirror;
    const bytes = await readAll(exchange, fetch.group.end - fetch.start);
    mirror.received(bytes.length);
    mirror.probe = { bytes, size };
    mirror.failuresInARow = 0;
    if (!this.reference.bytesIfReady() && size !== undefined && (!this.plan || this.plan.size === size)) {
      if (!this.plan) await this.startPlan(size);
      mirror.phase = 'tentative';
      this.reportMirrors(true);
      return;
    }
    await this.reference.ready(fetch.controller.signal);
    this.judgeProbe(mirror);
  }

  /** Compares a mirror's probe with the primary's first bytes: it becomes active, or is dropped. */
  private judgeProbe(mirror: MirrorState): void {
    const probe = mirror.probe;
    const reference = this.reference.bytesIfReady();
    if (!probe || !reference) return;
    mirror.probe = undefined;
    if (probe.size !== this.reference.size) {
      const reason = `it serves a file of ${probe.size ?? 'unknown'} bytes, not ${this.reference.size}`;
      return this.dropMirror(mirror, reason, new DownloadError('bad-length', reason));
    }
    const difference = firstDifference(probe.bytes, reference);
    if (difference !== undefined) {
      const reason = `it serves different bytes than ${this.mirrors[0]!.url} (first difference at byte ${difference})`;
      return this.dropMirror(mirror, reason, new DownloadError('bad-range', reason));
    }
    mirror.phase = 'active';
    this.reportMirrors(true);
  }

  /** Once the primary's first bytes are in, every mirror that started on trust is judged. */
  private confirmTentative(): void {
    if (!this.reference.bytesIfReady()) return;
    for (const mirror of this.mirrors) if (mirror.phase === 'tentative') this.judgeProbe(mirror);
  }

  /** Forgets bytes an unchecked mirror stored: they never count towards the file. */
  private discardBytes(start: number, end: number): void {
    this.plan?.discard(start, end);
    this.host.discarded(start, end);
    void this.host.store.discardRange(this.host.jobId, start, end).catch((error: unknown) => this.fail(error));
  }

  private blockDone(fetch: BlockFetch): void {
    const elapsed = Date.now() - fetch.issuedAt;
    if (fetch.expectedMs !== undefined) {
      const average = this.deadlines.averageRatio();
      if (average !== undefined && elapsed < fetch.expectedMs * average) this.window.fastBlock();
      this.deadlines.observe(elapsed, fetch.expectedMs);
    }
    fetch.mirror.deadlineMisses = 0;
    for (const other of fetch.group.fetches) if (other !== fetch) other.controller.abort(LOST);
    this.pieceGuard()?.check();
  }

  /** Ranges that mirrors other than the primary stored, merged per mirror. */
  mirrorSegments(): Segment[] {
    return this.provenance.mirrorSegments();
  }

  // ---- piece hashes -------------------------------------------------------------------------

  /** The piece guard, once the size and piece hashes are both known. */
  private pieceGuard(): PieceGuard | undefined {
    const pieces = this.host.expectedPieces();
    const plan = this.plan;
    if (this.pieces || !pieces || !plan) return this.pieces;
    const misfit = PieceGuard.misfit(pieces, plan.size);
    if (misfit) {
      this.host.notice(misfit);
      return undefined;
    }
    const { host } = this;
    this.pieces = new PieceGuard(
      {
        store: host.store,
        jobId: host.jobId,
        createHasher: host.options.createHasher,
        plan,
        provenance: this.provenance,
        notice: (message) => host.notice(message),
        discarded: (start, end) => host.discarded(start, end),
        blame: (mirror, reason) => {
          if (this.mirrors.some((m) => m !== mirror && m.phase === 'active')) this.dropMirror(mirror, reason, new DownloadError('verify', reason));
        },
        fail: (error) => this.fail(error),
        changed: () => this.pump(),
      },
      pieces,
    );
    return this.pieces;
  }

  private fetchFailed(fetch: BlockFetch, error: unknown, progressed: boolean): void {
    const mirror = fetch.mirror;
    const { options } = this.host;
    if (error === LOST || error === YIELDED || this.failure !== undefined || this.signal.aborted) return;
    if (error instanceof RestartAll || error instanceof FallbackToStream) return this.fail(error);
    if (isQuotaError(error)) return this.fail(storageFull(0));
    if (error instanceof MirrorProblem) return this.dropMirror(mirror, error.message, new DownloadError(error.code, error.message));
    if (error instanceof DownloadError && !error.retryable) return this.fail(error);
    if (progressed) {
      // A reset or stall mid-body: the rest is requested again at once, here or elsewhere.
      if (error instanceof StallError) this.penalize(mirror);
      return;
    }
    const retryAfterMs = error instanceof DownloadError ? error.retryAfterMs : undefined;
    if (retryAfterMs !== undefined && retryAfterMs > options.maxRetryAfterMs) {
      const reason = `${describe(error)}, and asked to retry only after ${Math.round(retryAfterMs / 1000)} s`;
      return this.dropMirror(mirror, reason, new DownloadError('http-status', reason));
    }
    mirror.failed(options.retryBaseMs, options.retryMaxMs, retryAfterMs);
    if (mirror.failuresInARow >= options.maxAttemptsWithoutProgress) {
      const reason = `gave up after ${mirror.failuresInARow} attempts that received nothing; last: ${describe(error)}`;
      this.dropMirror(mirror, reason, new DownloadError('network', reason));
    }
  }

  /**
   * A slow or silent mirror gets no new block for a while, so others take its work; it is
   * tried again later. Alone, a mirror is never benched: there is nobody to take over.
   */
  private penalize(mirror: MirrorState): void {
    const now = Date.now();
    if (!this.mirrors.some((m) => m !== mirror && m.usable(now))) return;
    mirror.deadlineMisses++;
    mirror.backoffUntil = Date.now() + Math.min(10_000, 500 * 2 ** (mirror.deadlineMisses - 1));
  }

  /** Stops using a mirror; when none is left the job fails with `error` (one source) or all reasons. */
  private dropMirror(mirror: MirrorState, reason: string, error: DownloadError): void {
    if (mirror.phase === 'dropped') return;
    mirror.drop(reason);
    if (mirror.untrusted) for (const r of this.provenance.takeFrom(mirror)) this.discardBytes(r.start, r.end);
    if (this.mirrors.length > 1) this.host.notice(`${mirror.isPrimary ? 'the server' : 'mirror'} ${mirror.url} was dropped: ${reason}`);
    this.reportMirrors(true);
    for (const f of this.active) if (f.mirror === mirror) f.controller.abort(LOST);
    if (this.mirrors.some((m) => m.phase === 'active')) return;
    if (this.mirrors.length === 1) return this.fail(error);
    const reasons = this.mirrors.map((m) => `${m.url}: ${m.dropReason ?? 'not checked yet'}`).join('; ');
    this.fail(new DownloadError(error.code, `no usable source is left (${reasons})`));
  }

  // ---- time ---------------------------------------------------------------------------------

  /** Deadlines, stalls and the end of backoffs. */
  private tick(): void {
    if (this.failure !== undefined) return;
    const now = Date.now();
    for (const fetch of this.active) {
      if (fetch.kind !== 'block' || now < fetch.deadline || fetch.group.missedDeadline) continue;
      fetch.group.missedDeadline = true;
      if (fetch.group.attempts === 1) this.window.deadlineMissed();
      // A silent mirror is benched; a merely slow one keeps its (now smaller) share.
      if (now - fetch.lastByteAt > SILENT_MS) this.penalize(fetch.mirror);
      this.hedge(fetch, now);
    }
    this.reportMirrors(false);
    this.pump();
  }

  /** Re-requests a late block's remainder on the mirror expected to finish it first. */
  private hedge(fetch: BlockFetch, now: number): void {
    // A block that received every byte may still wait on the disk: nothing is left to hedge.
    if (fetch.pos >= fetch.group.end || fetch.group.fetches.size >= 2 || !this.window.allows(this.blockFetches())) return;
    const depth = this.depth();
    const remaining = fetch.group.end - fetch.pos;
    const eta = (m: MirrorState) => (m.rttMs ?? 0) + (remaining * 1000) / Math.max(1, m.rate() / (m.inFlight + 1));
    const target = this.mirrors
      .filter((m) => m !== fetch.mirror && m.usable(now) && m.inFlight <= depth)
      .sort((a, b) => eta(a) - eta(b))[0];
    if (target) this.issue(target, fetch.pos, fetch.group);
  }

  // ---- ending -------------------------------------------------------------------------------

  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    for (const f of this.active) f.controller.abort(error);
    this.reference.abandon(error);
    this.trySettle();
  }

  /** Resolves or rejects once nothing is in flight; true when the run is over. */
  private trySettle(): boolean {
    // Bytes from mirrors not yet checked against the primary cannot complete the file.
    const stored = this.plan?.isComplete() === true && this.failure === undefined && !this.mirrors.some((m) => m.phase === 'tentative');
    const pieces = stored ? this.pieceGuard() : undefined;
    if (pieces && !pieces.settled) {
      // Every byte is here; the run ends once the last pieces pass their hashes.
      pieces.check();
      return false;
    }
    const complete = stored;
    if (complete) for (const f of this.active) f.controller.abort(LOST);
    if (!complete && this.failure === undefined) return false;
    if (this.active.size > 0) return true;
    const settle = this.settle;
    this.settle = undefined;
    if (complete) settle?.resolve();
    else settle?.reject(this.failure);
    return true;
  }

  private reportMirrors(force: boolean): void {
    const now = Date.now();
    if (!force && now - this.lastReportAt < this.host.options.progressIntervalMs) return;
    this.lastReportAt = now;
    this.host.mirrorsChanged(this.mirrors.map((m) => m.report()));
  }
}
