import { DownloadError } from '../../errors';
import { englishDrop } from '../../notice';
import { ifRangeValidator } from '../../remote-file';
import { isQuotaError } from '../../store';
import { storageFull, type SchedulerHost } from '../../transfer-host';
import type { WriteGate } from '../../write-gate';
import type { BlockRequest, RequestHooks } from './block-request';
import type { BlockWindow } from '../policies/block-window';
import type { DeadlineEstimator } from '../policies/deadlines';
import type { Discovery } from './discovery';
import { judgeFailure } from '../policies/failure-policy';
import type { MirrorSet } from './mirror-set';
import type { MirrorState } from './mirror-state';
import { LOST } from './outcomes';
import type { PieceGuard } from './piece-guard';

/** The parts of the scheduler a request's outcome touches. */
export interface OutcomeContext {
  host: SchedulerHost;
  sources: MirrorSet;
  discovery: Discovery;
  deadlines: DeadlineEstimator;
  window(): BlockWindow;
  /** The run is neither failed nor aborted. */
  running(): boolean;
  pieceGuard(): PieceGuard | undefined;
  fail(error: unknown): void;
  /** Benches a stalling mirror when others can take its work. */
  bench(mirror: MirrorState): void;
  /** A request is done with its connection before it settles (its last records are being stored). */
  released(request: BlockRequest): void;
  /** The requests of `mirror` not yet settled. */
  requestsOf(mirror: MirrorState): BlockRequest[];
}

/**
 * What each event of a request means for the download: received bytes feed the mirror's rate
 * and the reference; stored bytes enter the plan (or are discarded when their mirror turned
 * out untrusted); a finished block updates the deadlines and the window and wins its race; a
 * failure is judged (drop the mirror, retry later, resume at once, or end the run).
 */
export function requestOutcomes(context: OutcomeContext, gate: WriteGate): RequestHooks {
  const { host, sources, discovery } = context;
  return {
    store: host.store,
    jobId: host.jobId,
    options: host.options,
    gate,
    validatorFor: (mirror) => (mirror.isPrimary ? host.file && ifRangeValidator(host.file) : (mirror.etag ?? mirror.lastModified)),
    accept: (request, ask, facts) => discovery.accept(request, ask, facts),
    finishProbe: (request, exchange, size) => discovery.finishProbe(request, exchange, size),
    received: (request, chunk, offset) => {
      request.mirror.received(chunk.length, host.options.clock.now());
      host.received(chunk.length);
      if (request.mirror.isPrimary) sources.offerReference(offset, chunk);
      sources.report(false);
    },
    stored: (request, start, end) => {
      if (request.mirror.untrusted) return discovery.discard(start, end);
      discovery.plan?.addStored(start, end);
      sources.provenance.add(start, end, request.mirror);
      host.stored(start, end);
    },
    arrived: (request) => {
      const elapsed = host.options.clock.now() - request.issuedAt;
      if (request.expectedMs !== undefined && context.deadlines.observe(elapsed, request.expectedMs)) context.window().fastBlock();
      request.mirror.deadlineMisses = 0;
      for (const other of request.group.fetches) if (other !== request) other.controller.abort(LOST);
    },
    released: (request) => context.released(request),
    completed: () => context.pieceGuard()?.check(),
    failed: (request, error, progressed) => {
      if (!context.running()) return;
      const { mirror } = request;
      const others = context.requestsOf(mirror).filter((r) => r !== request);
      const verdict = judgeFailure(error, progressed, host.options.maxRetryAfterMs, () => storageFull(0));
      // A guessed block that got nothing says nothing its mirror's probe, asked at the same moment, does not.
      if (request.guessed && verdict.kind === 'retry') return;
      switch (verdict.kind) {
        case 'fail':
          return context.fail(verdict.error);
        case 'drop':
          return sources.drop(
            mirror,
            verdict.why,
            new DownloadError(verdict.code, englishDrop(verdict.why), false, undefined, verdict.status),
          );
        case 'resume':
          // A reset mid-body: the rest is requested again at once, here or elsewhere. A stall is the server's silence,
          // not a reset: its connections are not rebuilt in numbers.
          mirror.broke(host.options.clock.now(), !verdict.stalled && !others.some((r) => r.receiving));
          if (verdict.stalled) context.bench(mirror);
          return;
        case 'retry': {
          mirror.broke(host.options.clock.now());
          // Its probe failed: blocks guessed with it would wait for a check that is not coming soon.
          if (request.kind === 'probe') for (const r of others) if (r.guessed) r.controller.abort(LOST);
          // A guess is no working connection until its mirror is admitted; one storing its last records holds none.
          const working = others.filter((r) => !r.storing && !(r.guessed && mirror.phase === 'probing')).length;
          return sources.failedBeforeBytes(mirror, error, verdict.retryAfterMs, verdict.status, working);
        }
      }
    },
    storeFailed: (error, kept) => context.fail(isQuotaError(error) ? storageFull(kept) : error),
  };
}
