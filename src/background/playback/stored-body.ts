import type { ByteRange } from '../../engine';
import type { BrowserStore } from '../../storage/stored-blob-url';
import type { PlaybackHub } from './playback';
import { answerRange, firstMissing } from './stream-range';

export interface StoredBodyDeps {
  hub: Pick<PlaybackHub, 'follow' | 'storedRanges' | 'nextChange'>;
  store: () => Promise<Pick<BrowserStore, 'read'>>;
}

/** Reads stored bytes [start, end) of a job, in order. */
export type ReadStored = (jobId: string, start: number, end: number) => AsyncIterable<Uint8Array>;

/** What one response body sends of a job's stored bytes, and how it follows the job. */
export interface StoredBodyPlan {
  jobId: string;
  size: number;
  range: ByteRange;
  /** Largest piece read from the store at once (its bytes are still handed over one record per pull). */
  maxChunk: number;
  /** How a piece is read; default: the store's read. */
  read?: ReadStored;
  /** The body fails when no byte it waits for was stored for this long; undefined: it waits as long as the job lives. */
  waitMs?: number;
  /** Why no more bytes will come (the body then fails), or undefined; `sent`: bytes sent so far end there. */
  stopped(stored: readonly ByteRange[], sent: number): string | undefined;
  /** Where the bytes may be sent up to now (a save holds the last ones back); default: all. */
  sendableEnd?(): number;
  /** The first byte the reader needs next (undefined: none missing), told before each piece and each wait. */
  need?(position: number | undefined): void;
  /** Bytes up to `end` were handed to the reader. */
  sent?(end: number): void;
  /** The body ended: complete, failed or cancelled by its reader. */
  closed?(): void;
}

/** A wait without a deadline still wakes this often to look again. */
const RECHECK_MS = 30_000;

/**
 * A job's bytes `plan.range`, in order, as they are stored: one piece per pull (at most one in
 * memory), waiting on the job's events for bytes still in flight. Shared by the player's stream
 * route and the streamed save.
 */
export function storedBody(deps: StoredBodyDeps, plan: StoredBodyPlan): ReadableStream<Uint8Array> {
  const { hub } = deps;
  const { jobId, size, range } = plan;
  const cancelled = new AbortController();
  // While the body is open, the hub keeps the job's stored ranges current from its events.
  const unfollowHub = hub.follow(jobId);
  let open = true;
  const close = () => {
    if (!open) return;
    open = false;
    unfollowHub();
    plan.closed?.();
  };
  let pos = range.start;
  /** The piece being handed over, one chunk per pull. */
  let chunks: AsyncIterator<Uint8Array> | undefined;
  const read: ReadStored = plan.read ?? ((...args) => readFrom(deps, ...args));
  return new ReadableStream<Uint8Array>(
    {
      pull: async (controller) => {
        if (pos >= range.end) {
          close();
          return controller.close();
        }
        const waitUntil = plan.waitMs === undefined ? Infinity : Date.now() + plan.waitMs;
        for (;;) {
          if (cancelled.signal.aborted) return;
          const stored = await hub.storedRanges(jobId);
          const reason = plan.stopped(stored, pos);
          if (reason !== undefined) {
            close();
            return controller.error(new Error(reason));
          }
          if (chunks) {
            try {
              const next = await chunks.next();
              if (!next.done) {
                controller.enqueue(next.value);
                pos += next.value.length;
                plan.sent?.(pos);
                return;
              }
            } catch {
              // discarded meanwhile (a piece failed its hash): look again
            }
            chunks = undefined;
            continue;
          }
          const upTo = Math.min(range.end, plan.sendableEnd?.() ?? range.end);
          const piece = pos < upTo ? answerRange({ kind: 'range', start: pos, end: upTo }, size, stored, plan.maxChunk) : undefined;
          if (piece?.kind === 'serve') {
            plan.need?.(firstMissing(stored, pos, size));
            chunks = read(jobId, piece.start, piece.end)[Symbol.asyncIterator]();
            continue;
          }
          plan.need?.(pos);
          if (Date.now() > waitUntil) {
            close();
            return controller.error(new Error(`byte ${pos} was not downloaded within ${plan.waitMs} ms`));
          }
          await hub.nextChange(jobId, Math.min(RECHECK_MS, waitUntil - Date.now()), cancelled.signal);
        }
      },
      cancel: () => {
        cancelled.abort();
        close();
      },
    },
    { highWaterMark: 0 },
  );
}

async function* readFrom(deps: StoredBodyDeps, jobId: string, start: number, end: number): AsyncIterable<Uint8Array> {
  yield* (await deps.store()).read(jobId, start, end);
}
