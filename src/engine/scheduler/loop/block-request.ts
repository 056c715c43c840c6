import { BlockWriter } from '../../block-writer';
import type { Clock } from '../../clock';
import { openExchange, receiveBody, type Exchange } from '../../http/exchange';
import type { Ask } from '../../http/response-check';
import type { ResponseFacts } from '../../http/response-facts';
import type { EngineOptions } from '../../options';
import type { DownloadStore } from '../../store';
import type { WriteGate } from '../../write-gate';
import type { MirrorState } from './mirror-state';
import { LOST } from './outcomes';
import type { GroupView, RequestView } from '../policies/views';

/** Records for bytes a player waits for: about this long at the request's rate, not a whole block. */
const STREAM_RECORD_MS = 100;
const STREAM_RECORD_MIN = 8 * 1024;
const STREAM_RECORD_MAX = 128 * 1024;

/**
 * Record size for bytes a player waits for: readable about every STREAM_RECORD_MS at
 * `bytesPerSecond` (0: not measured, the smallest), a power of two so records stay aligned.
 */
export function streamRecordBytes(bytesPerSecond: number): number {
  const wanted = (bytesPerSecond * STREAM_RECORD_MS) / 1000;
  let bytes = STREAM_RECORD_MIN;
  while (bytes < wanted && bytes < STREAM_RECORD_MAX) bytes *= 2;
  return bytes;
}

function nextTask(clock: Clock): Promise<void> {
  return new Promise((resolve) => clock.after(0, resolve));
}

/** Copies of one block in flight; the first to reach `end` wins and the others are cut. */
export interface Group extends GroupView {
  end: number;
  urgent?: boolean;
  fetches: Set<BlockRequest>;
  attempts: number;
  missedDeadline: boolean;
}

export function newGroup(end: number, urgent = false): Group {
  return { end, urgent, fetches: new Set(), attempts: 0, missedDeadline: false };
}

/** What one request needs from the scheduler; every decision about the download stays there. */
export interface RequestHooks {
  readonly store: DownloadStore;
  readonly jobId: string;
  readonly options: EngineOptions;
  readonly gate: WriteGate;
  /** The If-Range validator for this mirror's copy. */
  validatorFor(mirror: MirrorState): string | undefined;
  /** Checks the response before a byte of it is used; returns where its body goes. */
  accept(request: BlockRequest, ask: Ask, facts: ResponseFacts): Promise<{ start: number; end?: number; size?: number }>;
  /** A probe's body: compared with the primary's first bytes. */
  finishProbe(request: BlockRequest, exchange: Exchange, size: number | undefined): Promise<void>;
  received(request: BlockRequest, chunk: Uint8Array, offset: number): void;
  stored(request: BlockRequest, start: number, end: number): void;
  /** Every byte of the block arrived (its last records may still be on their way to the store). */
  arrived(request: BlockRequest): void;
  /** The request is done with its connection: the mirror may use it for another. */
  released(request: BlockRequest): void;
  /** Every byte of the block arrived and is stored. */
  completed(request: BlockRequest): void;
  /** It broke; `progressed`: bytes had arrived. */
  failed(request: BlockRequest, error: unknown, progressed: boolean): void;
  /** Storing failed (full disk, broken store). */
  storeFailed(error: unknown, keptBytes: number): void;
}

/**
 * One request's life: open, check, receive into the store, and report how it ended. It asks
 * [start, group.end) of its mirror; a cut or a lost race aborts it through its controller.
 */
export class BlockRequest implements RequestView {
  pos: number;
  lastByteAt: number;
  readonly controller = new AbortController();
  /** Every byte arrived, or its connection broke: it holds no connection, only its last records are being stored. */
  storing = false;
  /** Its connection broke: the bytes past what it received are no longer its own. */
  private broken = false;
  private writer: BlockWriter | undefined;

  constructor(
    readonly kind: 'block' | 'probe',
    readonly mirror: MirrorState,
    readonly start: number,
    readonly group: Group,
    readonly issuedAt: number,
    readonly expectedMs: number | undefined,
    readonly deadline: number,
    /** Asked before the file's size was known, at a guessed offset (probing.ts, guessedFirstBlock). */
    readonly guessed = false,
  ) {
    this.pos = start;
    this.lastByteAt = issuedAt;
  }

  /** Its body is on its way: bytes arrived, and more are due. */
  get receiving(): boolean {
    return !this.storing && !this.broken && this.pos > this.start;
  }

  /**
   * A guessed block, once the size is known: it ends at the file's end, and one that would start past it is given
   * up (false). Claims past the end would otherwise be duplicated, and the server would answer 416.
   */
  fitTo(size: number): boolean {
    // Past the end, it claims nothing from now on (it is in flight until its abort is seen).
    this.group.end = Math.max(this.start, Math.min(this.group.end, size));
    if (this.start < size) return true;
    this.controller.abort(LOST);
    return false;
  }

  /** Where the bytes it claims end (it may still bring them, or is storing them). */
  get claimEnd(): number {
    return this.broken ? this.pos : this.group.end;
  }

  /**
   * Ends this block (and its copies) at `at`: another request brings the bytes from there
   * sooner. What arrived before `at` is kept; the rest of the body is not read.
   */
  cutAt(at: number): void {
    if (at > this.start && at < this.group.end) this.group.end = at;
  }

  /**
   * A player waits for these bytes: make them readable in small records from now on, sized by
   * the request's share of its mirror's rate (they only grow: a record never splits in two).
   */
  streamRecords(): void {
    if (!this.writer) return;
    const bytes = streamRecordBytes(this.mirror.rate() / Math.max(1, this.mirror.inFlight));
    this.writer.recordBytes = Math.max(bytes, this.writer.recordBytes ?? 0);
  }

  /** Runs the request to its end; the scheduler aborts it through `controller` (a pause too). */
  async run(hooks: RequestHooks): Promise<void> {
    const writer = new BlockWriter(hooks.store, hooks.jobId, hooks.gate, (start, end) => hooks.stored(this, start, end));
    this.writer = writer;
    if (this.group.urgent) this.streamRecords();
    let exchange: Exchange | undefined;
    try {
      const ask: Ask = { start: this.start, end: this.group.end, ranged: true };
      if (ask.end === 0) return hooks.completed(this);
      const validator = this.kind === 'probe' ? undefined : hooks.validatorFor(this.mirror);
      exchange = await openExchange(this.mirror.url, ask, validator, hooks.options, this.controller.signal);
      this.mirror.observeRtt(exchange.headersMs);
      const target = await hooks.accept(this, ask, exchange.facts);
      if (this.kind === 'probe') return await hooks.finishProbe(this, exchange, target.size);
      const onChunk = (chunk: Uint8Array, offset: number) => {
        this.lastByteAt = hooks.options.clock.now();
        this.pos = Math.min(this.group.end, offset + chunk.length);
        hooks.received(this, chunk, offset);
      };
      await receiveBody(exchange, target, writer, onChunk, hooks.options.rateLimiter, () => this.group.end);
      this.mirror.observeWait(exchange.headersMs, hooks.options.clock.now() - this.issuedAt);
      const received = this.pos >= this.group.end;
      if (received) hooks.arrived(this);
      this.mirror.failuresInARow = 0;
      if (this.pos === target.end) {
        // The whole response was read: its connection is back in the pool once the fetch has
        // done its bookkeeping (a task later in Node's), so the mirror's next request can go
        // out on it while this block's last records are stored.
        await exchange.close();
        exchange = undefined;
        await nextTask(hooks.options.clock);
        this.storing = true;
        hooks.released(this);
      }
      await writer.flush();
      if (received) hooks.completed(this);
    } catch (caught) {
      const aborted = this.controller.signal.aborted ? this.controller.signal : exchange?.signal.aborted ? exchange.signal : undefined;
      const error: unknown = aborted ? aborted.reason : caught;
      // Judged, its connection's slot and the rest of its block given to other requests now, not once what it
      // received is stored: after a reset every connection of a server breaks at once, and each millisecond
      // before they are reopened is one the server sends nothing.
      this.broken = true;
      hooks.failed(this, error, this.pos > this.start);
      if (!this.storing) {
        this.storing = true;
        hooks.released(this);
      }
      await writer.flush().catch((flushError: unknown) => hooks.storeFailed(flushError, writer.stored));
    } finally {
      await exchange?.close();
    }
  }
}
