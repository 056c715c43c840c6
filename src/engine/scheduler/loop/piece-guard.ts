import type { DownloadStore } from '../../store';
import { DownloadError } from '../../errors';
import { englishDrop, type DropReason, type JobNotice } from '../../notice';
import type { PieceHashes } from '../../integrity/expected';
import type { HasherFactory } from '../../integrity/hasher';
import { PieceChecker, type PieceResult } from '../../integrity/piece-checker';
import type { SchedulerHost } from '../../transfer-host';
import type { MirrorSet } from './mirror-set';
import type { MirrorState } from './mirror-state';
import type { Plan } from './plan';
import type { Provenance } from './provenance';

/** What the guard needs from the scheduler. */
export interface PieceGuardHost {
  store: DownloadStore;
  jobId: string;
  createHasher: HasherFactory;
  plan: Plan;
  provenance: Provenance;
  notice(notice: JobNotice): void;
  discarded(start: number, end: number): void;
  /** Drops a mirror that sent a bad piece, if others can carry on. */
  blame(mirror: MirrorState, why: DropReason): void;
  fail(error: unknown): void;
  /** Called after each round of checks: a discarded piece needs fetching again. */
  changed(): void;
}

/**
 * Verifies Metalink piece hashes as pieces complete. A bad piece is discarded, fetched again
 * elsewhere, and the mirrors that sent it are dropped; checks and discards run one at a time,
 * so a piece is never read while it is being discarded.
 */
export class PieceGuard {
  private readonly checker: PieceChecker;
  private readonly failures = new Map<number, number>();
  private work: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly host: PieceGuardHost,
    pieces: PieceHashes,
  ) {
    this.checker = new PieceChecker(host.store, host.jobId, pieces, host.plan.size, host.createHasher);
  }

  /**
   * The guard of a download whose size and piece hashes are known; null (after a notice) when
   * the hashes do not fit the file. A bad piece's mirror is dropped only if others can carry on.
   */
  static forDownload(
    pieces: PieceHashes,
    host: SchedulerHost,
    plan: Plan,
    sources: MirrorSet,
    run: Pick<PieceGuardHost, 'fail' | 'changed'>,
  ): PieceGuard | null {
    if (pieces.hashes.length !== Math.ceil(plan.size / pieces.length)) {
      host.notice({ kind: 'pieces-misfit', count: pieces.hashes.length, size: plan.size });
      return null;
    }
    const guardHost: PieceGuardHost = {
      ...run,
      store: host.store,
      jobId: host.jobId,
      createHasher: host.options.createHasher,
      plan,
      provenance: sources.provenance,
      notice: (notice) => host.notice(notice),
      discarded: (start, end) => host.discarded(start, end),
      blame: (mirror, why) => {
        if (sources.mirrors.some((m) => m !== mirror && m.phase === 'active'))
          sources.drop(mirror, why, new DownloadError('verify', englishDrop(why)));
      },
    };
    return new PieceGuard(guardHost, pieces);
  }

  /** Every piece checked and good, and no check running. */
  get settled(): boolean {
    return this.checker.allVerified && !this.work;
  }

  check(): void {
    if (this.work) {
      this.again = true;
      return;
    }
    const { host } = this;
    this.work = (async () => {
      do {
        this.again = false;
        const results = await this.checker.check((start, end) => host.plan.covers(start, end));
        for (const result of results) if (!result.ok) await this.reject(result);
      } while (this.again);
    })()
      .catch((error: unknown) => host.fail(error))
      .finally(() => {
        this.work = undefined;
        host.changed();
      });
  }

  private async reject(piece: PieceResult): Promise<void> {
    const { host } = this;
    const failures = (this.failures.get(piece.index) ?? 0) + 1;
    this.failures.set(piece.index, failures);
    const bytes = `bytes ${piece.start}–${piece.end - 1}`;
    const suppliers = host.provenance.suppliers(piece.start, piece.end);
    await host.store.discardRange(host.jobId, piece.start, piece.end);
    host.plan.discard(piece.start, piece.end);
    this.checker.forget(piece.start, piece.end);
    host.provenance.forget(piece.start, piece.end);
    host.discarded(piece.start, piece.end);
    host.notice({ kind: 'piece-failed', piece: piece.index, start: piece.start, end: piece.end });
    if (failures > 3) throw new DownloadError('verify', `piece ${piece.index} (${bytes}) fails its hash from every source`);
    for (const mirror of suppliers) host.blame(mirror, { kind: 'bad-piece', piece: piece.index });
  }
}
