import type { Exchange } from '../../http/exchange';
import type { Ask } from '../../http/response-check';
import type { ResponseFacts } from '../../http/response-facts';
import { hexDigestsContradict, toHexDigests } from '../../integrity/expected';
import { fileChange } from '../../remote-file';
import { describeFile, type SchedulerHost } from '../../transfer-host';
import type { BlockRequest } from './block-request';
import type { MirrorSet } from './mirror-set';
import { MirrorProblem } from '../../mirror-problem';
import { RestartAll } from './outcomes';
import { PieceGuard } from './piece-guard';
import { Plan } from './plan';
import { readAll } from './probe-bytes';
import { vetResponse } from './vet-response';

/**
 * What the first responses tell: the file's size (and so the plan of its bytes), the
 * primary's first bytes every mirror is compared with, and whether each mirror serves the
 * same file. Every response passes `accept` before a byte of it is used.
 */
export class Discovery {
  plan: Plan | undefined;
  /** Checks Metalink piece hashes; null when the hashes do not fit the file. */
  private pieces: PieceGuard | null | undefined;

  constructor(
    private readonly host: SchedulerHost,
    private readonly sources: MirrorSet,
    private readonly pump: () => void,
    private readonly fail: (error: unknown) => void,
    /** The size is known: blocks guessed before it must fit the file. */
    private readonly sizeKnown: (size: number) => void,
  ) {}

  /** A new run: size, plan and pieces are learned again. */
  reset(): void {
    this.plan = undefined;
    this.pieces = undefined;
  }

  /** The piece guard, once the size and piece hashes are both known. */
  pieceGuard(): PieceGuard | undefined {
    const pieces = this.host.expectedPieces();
    if (this.pieces === undefined && pieces && this.plan) {
      this.pieces = PieceGuard.forDownload(pieces, this.host, this.plan, this.sources, { fail: this.fail, changed: this.pump });
    }
    return this.pieces ?? undefined;
  }

  /** Forgets stored bytes that must not count towards the file (an unchecked mirror's). */
  discard(start: number, end: number): void {
    this.plan?.discard(start, end);
    this.host.discarded(start, end);
    void this.host.store.discardRange(this.host.jobId, start, end).catch((error: unknown) => this.fail(error));
  }

  async startPlan(size: number): Promise<void> {
    const { store, jobId } = this.host;
    this.plan = new Plan(size, await store.storedRanges(jobId));
    this.sizeKnown(size);
    const reference = this.sources.reference;
    reference.setSize(size);
    if (this.plan.covers(0, reference.length)) await reference.loadFrom(store.read(jobId, 0, reference.length));
  }

  /** Checks a response before a byte of it is used; returns where its body goes. */
  async accept(request: BlockRequest, ask: Ask, facts: ResponseFacts): Promise<{ start: number; end?: number; size?: number }> {
    const { host, sources } = this;
    const mirror = request.mirror;
    if (request.guessed) await this.checkGuess(request, facts);
    const verdict = vetResponse(facts, ask, {
      isPrimary: mirror.isPrimary,
      file: host.file,
      size: host.file?.size ?? this.plan?.size,
      mirrorValidators: { etag: mirror.etag, lastModified: mirror.lastModified },
      othersLeft: sources.mirrors.some((m) => !m.isPrimary && m.phase !== 'dropped'),
    });
    if (!host.file && mirror.isPrimary && verdict.size !== undefined) {
      if (this.plan && this.plan.size !== verdict.size) {
        const why = { kind: 'other-size', size: this.plan.size, expected: verdict.size } as const;
        for (const m of sources.mirrors) if (m.phase === 'tentative') sources.excluded.set(m.url, why);
        throw new RestartAll({ kind: 'sizes-differ', mirrors: this.plan.size, primary: verdict.size });
      }
      await host.setFile(describeFile(host, facts, verdict.size, true));
      if (!this.plan) await this.startPlan(verdict.size);
      // The discovery request asked for a fixed first block: smaller files end sooner.
      request.group.end = Math.min(request.group.end, verdict.size);
      await sources.followAdvertised(facts, mirror.url);
      queueMicrotask(() => this.pump());
    }
    if (request.kind === 'probe') {
      mirror.etag = facts.etag;
      mirror.lastModified = facts.lastModified;
      if (hexDigestsContradict(toHexDigests(facts.digests, mirror.url), host.knownDigests())) {
        throw new MirrorProblem({ kind: 'other-digest' }, 'verify');
      }
    }
    return verdict;
  }

  /**
   * A block asked before the size was known waits (unread: its bytes stay with the connection) until its mirror may
   * store bytes; then it must lie within the file, and come from the copy the mirror's probe described (it was asked
   * without If-Range: the mirror's validators were not known yet).
   */
  private async checkGuess(request: BlockRequest, facts: ResponseFacts): Promise<void> {
    const { mirror, controller } = request;
    await this.sources.admitted(mirror, controller.signal);
    // Admitted once the plan exists.
    const size = this.plan!.size;
    if (!request.fitTo(size)) controller.signal.throwIfAborted();
    const total = facts.contentRange?.kind === 'bytes' ? facts.contentRange.total : undefined;
    const copy = { size, etag: mirror.etag, lastModified: mirror.lastModified };
    const change = fileChange(copy, { size: total, etag: facts.etag, lastModified: facts.lastModified });
    if (change) throw new MirrorProblem({ kind: 'restart', cause: { kind: 'changed', change } });
  }

  /**
   * A probe's bytes must equal the primary's: otherwise the mirror serves another file. When
   * the primary has not answered yet (a far origin, near mirrors), the mirror starts working
   * at once on trust, and is checked as soon as the primary's first bytes arrive.
   */
  async finishProbe(request: BlockRequest, exchange: Exchange, size: number | undefined): Promise<void> {
    const { mirror } = request;
    const bytes = await readAll(exchange, request.group.end - request.start);
    mirror.received(bytes.length, this.host.options.clock.now());
    mirror.probe = { bytes, size };
    mirror.failuresInARow = 0;
    if (this.sources.referencePending && size !== undefined && (!this.plan || this.plan.size === size)) {
      if (!this.plan) await this.startPlan(size);
      this.sources.admit(mirror, 'tentative');
      return;
    }
    await this.sources.reference.ready(request.controller.signal);
    this.sources.judgeProbe(mirror);
  }
}
