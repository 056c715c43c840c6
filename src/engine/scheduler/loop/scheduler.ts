import { DownloadError } from '../../errors';
import type { Segment } from '../../integrity/reverify';
import type { ByteRange } from '../../ranges';
import type { SchedulerHost } from '../../transfer-host';
import { WriteGate } from '../../write-gate';
import { BlockRequest, newGroup, type Group, type RequestHooks } from './block-request';
import { assignWork } from '../policies/assignment';
import { BlockWindow, requestRoom } from '../policies/block-window';
import { benchSilent, DeadlineEstimator, expectedMs, lateDecisions, type LateContext } from '../policies/deadlines';
import type { Decision } from '../policies/decisions';
import { Discovery } from './discovery';
import { MirrorSet } from './mirror-set';
import type { MirrorState } from './mirror-state';
import { FallbackToStream, LOST, RestartAll, YIELDED } from './outcomes';
import { requestOutcomes } from './request-outcomes';
import { Plan } from './plan';
import { discoveryRequest, guessedFirstBlock, mirrorsToProbe } from '../policies/probing';
import { Reference } from './reference';
import { FreedMirrors } from '../policies/freed-mirrors';
import { CutBudget } from '../policies/cut-budget';
import { streamingDecisions } from '../policies/streaming-priority';

/** The connection count judges rates over at least three gaps between ticks: at 50 ms a window took 150 ms. */
const TICK_MS = 25;

/**
 * The loop of dynamic parallel access (Rodriguez & Biersack) with CoBlitz's deadlines and
 * block window: it pumps (hands out work as the policies decide), ticks (deadlines), issues
 * requests and settles the run. Every decision is a policy in its own file; one request's
 * life is `BlockRequest`; the sources and their checks are `MirrorSet`.
 */
export class MirrorScheduler {
  private readonly active = new Set<BlockRequest>();
  private readonly deadlines = new DeadlineEstimator();
  private readonly freedMirrors = new FreedMirrors<MirrorState>();
  private readonly cutBudget = new CutBudget<MirrorState>();
  private window = new BlockWindow(1, 1);
  private readonly sources: MirrorSet;
  private readonly discovery: Discovery;
  private readonly hooks: RequestHooks;
  private failure: unknown;
  private settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;

  constructor(
    private readonly host: SchedulerHost,
    private readonly signal: AbortSignal,
  ) {
    this.sources = new MirrorSet(host, this.mirrorSetEvents(), signal);
    this.discovery = new Discovery(
      host,
      this.sources,
      () => this.pump(),
      (error) => this.fail(error),
      (size) => {
        for (const request of this.active) if (request.guessed) request.fitTo(size);
      },
    );
    this.hooks = requestOutcomes(
      {
        host,
        sources: this.sources,
        discovery: this.discovery,
        deadlines: this.deadlines,
        window: () => this.window,
        running: () => this.failure === undefined && !signal.aborted,
        pieceGuard: () => this.discovery.pieceGuard(),
        fail: (error) => this.fail(error),
        bench: (mirror) => this.carryOut(benchSilent(mirror, this.lateContext(this.host.options.clock.now()))),
        released: (request) => {
          request.mirror.inFlight--;
          this.pump();
        },
        requestsOf: (mirror) => [...this.active].filter((r) => r.mirror === mirror),
      },
      new WriteGate(host.store.writeConcurrency),
    );
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
        await this.host.restart(error.why, 'changed');
      }
    }
  }

  /** Ranges that mirrors other than the primary stored, merged per mirror. */
  mirrorSegments(): Segment[] {
    return this.sources.provenance.mirrorSegments();
  }

  /** Hands out work at once (a seek moved the playback position). */
  wake(): void {
    if (this.settle) this.pump();
  }

  private async runOnce(): Promise<void> {
    const { host } = this;
    this.sources.reset();
    this.failure = undefined;
    this.discovery.reset();
    if (host.file?.size !== undefined) await this.discovery.startPlan(host.file.size);
    const { options } = host;
    const mirrors = this.sources.mirrors.length;
    const initial = Math.min(options.connectionsPerServer, options.maxConnectionsPerServer);
    this.window = BlockWindow.forDownload(mirrors, options.maxMirrors, initial, options.maxBufferBytes, host.store.blockSize);
    const done = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    const onAbort = () => this.fail(this.signal.reason);
    this.signal.addEventListener('abort', onAbort, { once: true });
    // Set again at each tick, before it runs (a tick that throws must not stop the ticking).
    let stopTicking: () => void;
    const tick = () => {
      stopTicking = options.clock.after(TICK_MS, tick);
      this.tick();
    };
    stopTicking = options.clock.after(TICK_MS, tick);
    try {
      this.pump();
      await done;
    } finally {
      stopTicking();
      this.signal.removeEventListener('abort', onAbort);
      this.sources.report(true);
    }
  }

  /** The plan of the file's bytes, once its size is known. */
  private get plan(): Plan | undefined {
    return this.discovery.plan;
  }

  /** Requests `mirror` may have in flight now: its connection count, decided by measurement. */
  private connections(mirror: MirrorState): number {
    return mirror.connections(this.host.options.clock.now());
  }

  // ---- the loop -------------------------------------------------------------------------------

  /** Hands out work until every usable mirror is busy or the window is full. */
  private pump(): void {
    if (this.failure !== undefined || this.trySettle()) return;
    const now = this.host.options.clock.now();
    const { plan, sources, host } = this;
    const playing = host.playback() !== undefined;
    const firstEnd = discoveryRequest(sources.primary, { now, size: plan?.size, known: !!plan && !sources.referencePending, playing });
    if (firstEnd !== undefined) this.issue(sources.primary, 0, newGroup(firstEnd));
    for (const mirror of mirrorsToProbe(sources.mirrors, now, host.options.maxMirrors, host.url, host.options.userLocation)) {
      this.issue(mirror, 0, newGroup(plan ? sources.reference.length : Reference.PROBE_BYTES), 'probe');
      if (plan || playing || this.connections(mirror) < 2) continue;
      const guess = guessedFirstBlock(this.claims());
      this.issue(mirror, guess.start, newGroup(guess.end), 'block', true);
    }
    if (!plan) return;
    const playback = host.playback();
    const players = host.playbacks();
    const streaming = playback ? streamingDecisions({ ...this.snapshot(now), plan, players }) : undefined;
    streaming?.decisions.forEach((d) => this.carryOut(d));
    if (streaming?.freed) this.freedMirrors.freed(streaming.freed.mirrors, streaming.freed.at);
    const work = assignWork({
      ...this.snapshot(now),
      plan,
      requests: () => this.onWire(),
      claims: () => this.claims(),
      windowRoom: () => this.windowRoom(),
      maxMirrors: host.options.maxMirrors,
      fileKey: host.url,
      userLocation: host.options.userLocation,
      playback,
      reserved: streaming && new Set([...streaming.reserved, ...this.freedMirrors.stillHeld(plan, players)]),
      sizes: host.options,
    });
    for (const decision of work) this.carryOut(decision);
  }

  /** Deadlines, stalls and the end of backoffs. */
  private tick(): void {
    if (this.failure !== undefined) return;
    const now = this.host.options.clock.now();
    for (const request of this.onWire()) {
      if (request.kind !== 'block' || now < request.deadline || request.group.missedDeadline) continue;
      request.group.missedDeadline = true;
      if (request.group.attempts === 1) this.window.deadlineMissed();
      lateDecisions(request, this.lateContext(now)).forEach((d) => this.carryOut(d));
    }
    for (const m of this.sources.mirrors) if (m.phase === 'active') m.observeConnections(now, this.sources.bytesReceived, this.plan?.size);
    this.sources.report(false);
    this.pump();
  }

  private lateContext(now: number): LateContext<MirrorState> {
    const windowHasRoom = this.window.allows(this.blockRequests().length);
    return { now, mirrors: this.sources.mirrors, connections: (m) => this.connections(m), windowHasRoom };
  }

  /** What the policies see: the mirrors, the requests in flight and the room left. */
  private snapshot(now: number) {
    const sources = this.sources;
    const connections = (m: MirrorState) => this.connections(m);
    return {
      now,
      mirrors: sources.mirrors,
      requests: this.onWire(),
      claims: this.claims(),
      connections,
      windowRoom: this.windowRoom(),
      referencePending: sources.referencePending,
    };
  }

  private carryOut(decision: Decision<MirrorState, BlockRequest> | undefined): void {
    if (!decision) return;
    switch (decision.kind) {
      case 'issue':
        return this.issue(decision.mirror, decision.start, newGroup(decision.end, decision.urgent));
      case 'duplicate':
        return this.issue(decision.mirror, decision.of.pos, decision.of.group);
      case 'split':
        return decision.request.cutAt(decision.at);
      case 'cut': {
        const { request } = decision;
        // A request cut already is still on the wire until its abort is seen: that takes no budget.
        if (!request.controller.signal.aborted && this.cutBudget.take(request.mirror, this.host.options.clock.now()))
          request.controller.abort(YIELDED);
        return;
      }
      case 'stream':
        return decision.request.streamRecords();
      case 'bench':
        decision.mirror.deadlineMisses = decision.misses;
        decision.mirror.backoffUntil = decision.until;
    }
  }

  private issue(mirror: MirrorState, start: number, group: Group, kind: 'block' | 'probe' = 'block', guessed = false): void {
    const now = this.host.options.clock.now();
    const expected = expectedMs(mirror, group.end - start);
    const deadline = this.deadlines.deadline(now, expected, group.attempts, group.urgent === true);
    const request = new BlockRequest(kind, mirror, start, group, now, expected, deadline, guessed);
    // A pause or cancel reaches requests through fail(), which aborts every active one.
    if (this.signal.aborted) request.controller.abort(this.signal.reason);
    group.attempts++;
    group.fetches.add(request);
    mirror.inFlight++;
    mirror.requests++;
    mirror.asked(now);
    this.active.add(request);
    void request.run(this.hooks).finally(() => {
      this.active.delete(request);
      group.fetches.delete(request);
      if (!request.storing) mirror.inFlight--;
      this.pump();
      this.trySettle();
    });
  }

  /** How many more block requests may start (block-window.ts, requestRoom). */
  private windowRoom(): number {
    const now = this.host.options.clock.now();
    const onWire = new Map<MirrorState, number>();
    for (const request of this.blockRequests()) onWire.set(request.mirror, (onWire.get(request.mirror) ?? 0) + 1);
    const loads = this.sources.mirrors.map((m) => ({ wanted: m.usable(now) ? m.connections(now) : 0, onWire: onWire.get(m) ?? 0 }));
    const memory = Math.floor(this.host.options.maxBufferBytes / this.host.store.blockSize);
    return requestRoom(this.window.value, memory, loads);
  }

  /** Requests still receiving: those storing their last records hold no connection and need no decision. */
  private onWire(): BlockRequest[] {
    return [...this.active].filter((r) => !r.storing);
  }

  private blockRequests(): BlockRequest[] {
    return this.onWire().filter((r) => r.kind === 'block');
  }

  /** Bytes requests in flight will deliver or are storing. */
  private claims(): ByteRange[] {
    return [...this.active].filter((r) => r.kind === 'block').map((r) => ({ start: r.start, end: r.claimEnd }));
  }

  private mirrorSetEvents() {
    return {
      dropped: (mirror: MirrorState, error: DownloadError) => {
        for (const r of this.active) if (r.mirror === mirror) r.controller.abort(LOST);
        const exhausted = this.sources.exhausted(error);
        if (exhausted) this.fail(exhausted);
      },
      discard: (start: number, end: number) => this.discovery.discard(start, end),
      grew: () => this.pump(),
    };
  }

  // ---- ending -------------------------------------------------------------------------------

  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    for (const r of this.active) r.controller.abort(error);
    this.sources.reference.abandon(error);
    this.trySettle();
  }

  /** Resolves or rejects once nothing is in flight; true when the run is over. */
  private trySettle(): boolean {
    // Bytes from mirrors not yet checked against the primary cannot complete the file.
    const complete =
      this.plan?.isComplete() === true && this.failure === undefined && !this.sources.mirrors.some((m) => m.phase === 'tentative');
    const pieces = complete ? this.discovery.pieceGuard() : undefined;
    if (pieces && !pieces.settled) {
      // Every byte is here; the run ends once the last pieces pass their hashes.
      pieces.check();
      return false;
    }
    if (complete) for (const r of this.active) r.controller.abort(LOST);
    if (!complete && this.failure === undefined) return false;
    if (this.active.size > 0) return true;
    const settle = this.settle;
    this.settle = undefined;
    if (complete) settle?.resolve();
    else settle?.reject(this.failure);
    return true;
  }
}
