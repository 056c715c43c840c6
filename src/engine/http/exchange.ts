import type { HttpResponse } from './fetch-port';
import type { BlockWriter } from '../block-writer';
import { DownloadError } from '../errors';
import { formatBytes } from '../format-bytes';
import type { EngineOptions } from '../options';
import type { RateLimiter } from '../rate-limiter';
import { Watchdog } from '../watchdog';
import type { Ask } from './response-check';
import { readResponseFacts, type ResponseFacts } from './response-facts';

/** A connection that delivered nothing for the stall timeout. */
export class StallError extends Error {
  override readonly name = 'StallError';
  /** `answered`: whether the response headers had arrived (else the server never answered). */
  constructor(ms: number, answered = true) {
    super(answered ? `no data for ${(ms / 1000).toFixed(1)} s` : `no answer within ${(ms / 1000).toFixed(1)} s`);
  }
}

/** Why an exchange is aborted when its owner is done with it. */
const CLOSED = Symbol('closed');

/** One request and its response, with a watchdog that aborts it when it goes silent. */
export interface Exchange {
  readonly response: HttpResponse;
  readonly facts: ResponseFacts;
  /** Milliseconds from sending the request to its response headers. */
  readonly headersMs: number;
  /** Aborts the request (and its body) with a reason. */
  abort(reason: unknown): void;
  /** Stops the watchdog and unlinks from the parent signal; cancels the body unless a reader holds it. */
  close(): Promise<void>;
  readonly watchdog: Watchdog;
  /** Aborted when the request was: its reason says why (stall, pause, lost race…). */
  readonly signal: AbortSignal;
}

/** The Range and If-Range headers for `ask`, plus the caller's own. */
export function requestHeaders(ask: Ask, validator: string | undefined, extra: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = { ...extra };
  if (!ask.ranged) return headers;
  headers.Range = `bytes=${ask.start}-${ask.end === undefined ? '' : ask.end - 1}`;
  if (validator && (ask.start > 0 || ask.end !== undefined)) headers['If-Range'] = validator;
  return headers;
}

/** Sends the request; rejects (network error, stall, abort) before any header arrives. */
export async function openExchange(
  url: string,
  ask: Ask,
  validator: string | undefined,
  options: EngineOptions,
  signal: AbortSignal,
): Promise<Exchange> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let answered = false;
  const watchdog = new Watchdog(options.clock, controller, options.stallTimeoutMs, () => new StallError(options.stallTimeoutMs, answered));
  const close = async (response?: HttpResponse) => {
    watchdog.stop();
    signal.removeEventListener('abort', onAbort);
    // Cancelling says the bytes read are no longer needed: a body its reader left at its last
    // byte (the block was complete) lets the CLI's client keep the connection for the next request.
    if (response?.body && !response.body.locked) await response.body.cancel().catch(() => {});
    // Releases a body left half-read (a no-op once it was read to the end).
    controller.abort(CLOSED);
  };
  const sentAt = options.clock.now();
  try {
    signal.throwIfAborted();
    const response = await options.fetch(url, {
      headers: requestHeaders(ask, validator, options.headers),
      signal: controller.signal,
      // Credentials and referrer are the job's per-URL policy (request-trust.ts, around options.fetch).
      cache: 'no-store',
    });
    answered = true;
    watchdog.kick();
    return {
      response,
      facts: readResponseFacts(response, options.clock.now()),
      headersMs: options.clock.now() - sentAt,
      abort: (reason) => controller.abort(reason),
      close: () => close(response),
      watchdog,
      signal: controller.signal,
    };
  } catch (error) {
    // Read before close(), which aborts with CLOSED: the caller needs the real failure.
    const failure: unknown = controller.signal.aborted ? controller.signal.reason : error;
    await close();
    throw failure;
  }
}

/**
 * Streams the body into the writer at [start, end); true when it ended with every promised
 * byte. `onChunk` sees each chunk with its file offset before it is buffered. `stopAt`, read
 * per chunk, ends the body early at that offset (the request was cut there: another request
 * brings the rest sooner).
 */
export async function receiveBody(
  exchange: Exchange,
  target: { start: number; end?: number },
  writer: BlockWriter,
  onChunk: (chunk: Uint8Array, offset: number) => void,
  limiter?: RateLimiter,
  stopAt?: () => number,
): Promise<boolean> {
  const body = exchange.response.body;
  if (!body) return target.end === undefined || target.end === target.start;
  writer.seek(target.start, target.end);
  const { reader, next } = chunksOf(body, exchange.signal);
  try {
    for (;;) {
      const { done, value } = await next();
      if (done) break;
      exchange.watchdog.kick();
      const stop = Math.min(stopAt?.() ?? Infinity, target.end ?? Infinity);
      const part = writer.position + value.length > stop ? value.subarray(0, Math.max(0, stop - writer.position)) : value;
      onChunk(part, writer.position);
      await writer.push(part);
      if (part !== value && stop === target.end) throw tooLong(target);
      if (writer.position >= stop) {
        // At the response's own end, reading the stream's end lets its connection go back to the
        // pool at once, for the next request (a cancel would close it). Past a cut, the rest is not wanted.
        if (stop === target.end && !(await next()).done) throw tooLong(target);
        return true;
      }
      if (limiter) {
        await limiter.take(value.length, exchange.signal);
        exchange.watchdog.kick();
      }
    }
  } finally {
    // With a read still pending (it lost its race with an abort), releasing rejects it.
    reader.releaseLock();
  }
  return target.end === undefined || writer.position === target.end;
}

/** Bytes read at once from a byte stream: more than a browser's fetch hands over per read (64–900 KiB seen). */
const READ_BYTES = 1024 * 1024;

/**
 * The body's chunks, each valid until the next read. A byte stream (fetch's in browsers and in
 * Node) is read into one buffer reused for every read: a default reader gets a fresh buffer per
 * chunk, and in Chromium's service worker mapping and zeroing that memory cost 0.3–0.4 s of
 * kernel time per 512 MiB (4 connections, fetch alone). The chunks are copied out, not read in
 * place into the records: an abort takes the buffer of a pending read with it, and the bytes
 * buffered before it.
 */
function chunksOf(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): {
  reader: { releaseLock(): void };
  next: () => Promise<ReadableStreamReadResult<Uint8Array>>;
} {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = body.getReader({ mode: 'byob' });
  } catch {
    const reader = body.getReader();
    return { reader, next: () => untilAborted(reader.read(), signal) };
  }
  let buffer = new Uint8Array(READ_BYTES);
  const next = async () => {
    const result = await untilAborted(byob.read(buffer), signal);
    if (result.value) buffer = new Uint8Array(result.value.buffer);
    return result;
  };
  return { reader: byob, next };
}

/**
 * `read`, or the signal's reason once it aborts. A fetch's body should fail its pending read on
 * an abort, but Node's (undici) sometimes leaves a read of a body's end pending for ever when the
 * abort comes as its last bytes arrive: the request never ended, so the download never did.
 */
function untilAborted<T>(read: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    read.catch(() => {});
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    read.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function tooLong(target: { start: number; end?: number }): DownloadError {
  return new DownloadError('bad-length', `the server sent more bytes than the ${formatBytes(target.end! - target.start)} it announced`);
}
