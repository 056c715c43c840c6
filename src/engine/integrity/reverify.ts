import type { DownloadStore } from '../store';
import { BlockWriter } from '../block-writer';
import { DownloadError } from '../errors';
import { openExchange, receiveBody, type Exchange } from '../http/exchange';
import type { EngineOptions } from '../options';

/** Bytes one mirror supplied. */
export interface Segment {
  start: number;
  end: number;
  mirror: string;
}

/**
 * After a whole-file digest mismatch: fetches again from the primary every range a mirror
 * supplied, compares it with what is stored, and replaces what differs. Returns the mirrors
 * that sent different bytes. The primary is the reference: it is the URL the user asked for.
 */
export async function reverifySegments(context: Context, segments: readonly Segment[]): Promise<Set<string>> {
  const liars = new Set<string>();
  for (const segment of segments) {
    if (await differs(context, segment)) {
      liars.add(segment.mirror);
      await context.store.discardRange(context.jobId, segment.start, segment.end);
      await refetch(context, segment);
    }
  }
  return liars;
}

/** Where the bytes are stored, and the primary to compare them with. */
export interface Context {
  store: DownloadStore;
  jobId: string;
  primary: { url: string; validator?: string };
  options: EngineOptions;
  signal: AbortSignal;
}

async function open({ primary, options, signal }: Context, segment: Segment): Promise<Exchange> {
  const exchange = await openExchange(
    primary.url,
    { start: segment.start, end: segment.end, ranged: true },
    primary.validator,
    options,
    signal,
  );
  const range = exchange.facts.contentRange;
  if (exchange.facts.status !== 206 || range?.kind !== 'bytes' || range.start !== segment.start || range.end !== segment.end) {
    await exchange.close();
    throw new DownloadError(
      'verify',
      `could not re-check bytes ${segment.start}–${segment.end - 1}: the server answered ${exchange.facts.status}`,
    );
  }
  return exchange;
}

async function differs(context: Context, segment: Segment): Promise<boolean> {
  const exchange = await open(context, segment);
  const stored = context.store.read(context.jobId, segment.start, segment.end)[Symbol.asyncIterator]();
  let pending: Uint8Array = new Uint8Array(0);
  try {
    const reader = exchange.response.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      exchange.watchdog.kick();
      // Compare the network bytes with the stored ones, whatever the chunk boundaries.
      let offset = 0;
      while (offset < value.length) {
        if (pending.length === 0) {
          const next = await stored.next();
          if (next.done) return true;
          pending = next.value;
        }
        const n = Math.min(pending.length, value.length - offset);
        for (let i = 0; i < n; i++) if (pending[i] !== value[offset + i]) return true;
        pending = pending.subarray(n);
        offset += n;
      }
    }
  } finally {
    await exchange.close();
    await stored.return?.();
  }
}

async function refetch(context: Context, segment: Segment): Promise<void> {
  const exchange = await open(context, segment);
  const writer = new BlockWriter(context.store, context.jobId);
  try {
    const complete = await receiveBody(exchange, segment, writer, () => {});
    await writer.flush();
    if (!complete) throw new DownloadError('verify', `could not fetch bytes ${segment.start}–${segment.end - 1} again`);
  } finally {
    await exchange.close();
  }
}
