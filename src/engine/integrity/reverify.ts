import type { DownloadStore } from '../../storage/store';
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
export async function reverifySegments(
  store: DownloadStore,
  jobId: string,
  primary: { url: string; validator?: string },
  segments: readonly Segment[],
  options: EngineOptions,
  signal: AbortSignal,
): Promise<Set<string>> {
  const liars = new Set<string>();
  for (const segment of segments) {
    if (await differs(store, jobId, primary, segment, options, signal)) {
      liars.add(segment.mirror);
      await store.discardRange(jobId, segment.start, segment.end);
      await refetch(store, jobId, primary, segment, options, signal);
    }
  }
  return liars;
}

async function open(primary: { url: string; validator?: string }, segment: Segment, options: EngineOptions, signal: AbortSignal): Promise<Exchange> {
  const exchange = await openExchange(primary.url, { start: segment.start, end: segment.end, ranged: true }, primary.validator, options, signal);
  const range = exchange.facts.contentRange;
  if (exchange.facts.status !== 206 || range?.kind !== 'bytes' || range.start !== segment.start || range.end !== segment.end) {
    await exchange.close();
    throw new DownloadError('verify', `could not re-check bytes ${segment.start}–${segment.end - 1}: the server answered ${exchange.facts.status}`);
  }
  return exchange;
}

async function differs(
  store: DownloadStore,
  jobId: string,
  primary: { url: string; validator?: string },
  segment: Segment,
  options: EngineOptions,
  signal: AbortSignal,
): Promise<boolean> {
  const exchange = await open(primary, segment, options, signal);
  const stored = store.read(jobId, segment.start, segment.end)[Symbol.asyncIterator]();
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

async function refetch(
  store: DownloadStore,
  jobId: string,
  primary: { url: string; validator?: string },
  segment: Segment,
  options: EngineOptions,
  signal: AbortSignal,
): Promise<void> {
  const exchange = await open(primary, segment, options, signal);
  const writer = new BlockWriter(store, jobId);
  try {
    const complete = await receiveBody(exchange, segment, writer, () => {});
    await writer.flush();
    if (!complete) throw new DownloadError('verify', `could not fetch bytes ${segment.start}–${segment.end - 1} again`);
  } finally {
    await exchange.close();
  }
}
