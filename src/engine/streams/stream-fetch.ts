import type { Clock } from '../clock';
import type { HttpFetch, HttpRequest, HttpResponse } from '../http/fetch-port';
import { parseContentLength, parseContentRange } from '../http/headers';
import { hexToBytes } from '../integrity/digests';
import { MirrorProblem } from '../mirror-problem';
import { AesCbc } from './aes-cbc';
import { patched } from './fmp4-mux';
import { shown } from './stream-bounds';
import { AES_BLOCK, partOffsets, piecesOf, type PartPiece, type StreamLayout, type StreamSource } from './stream-layout';

/**
 * The fetch port of a stream's job: a request for a source's playlist URL with a Range is
 * answered from that source's segments, as a server of the laid-out file would answer it (206,
 * Content-Range, Content-Length). So the engine's blocks, mirrors, retries, resumes and checks
 * work on streams unchanged. Each segment's answer is checked against the layout (its range, its
 * size), AES-128 parts are decrypted, a DASH stream's joined init is served from the layout and its
 * fragments' patches written over them (fmp4-mux.ts). The next segment's request is sent when the current
 * one's body is about one request's wait from its end: a block over many small segments does not
 * wait a round trip for each, and the next body does not share the server's rate with the current
 * one (the segment a player waits for would come half as fast).
 * Any other URL goes to `inner` as it is.
 */
export function streamFetch(layout: StreamLayout, inner: HttpFetch, clock: Pick<Clock, 'now'>): HttpFetch {
  const offsets = partOffsets(layout);
  const size = offsets[offsets.length - 1]!;
  const ciphers = new Map<number, Promise<AesCbc>>();
  const cipherOf = (index: number) => {
    let cipher = ciphers.get(index);
    if (!cipher) ciphers.set(index, (cipher = AesCbc.fromHex(layout.keys[index]!)));
    return cipher;
  };

  return async (url, init = {}) => {
    const source = layout.sources.find((candidate) => candidate.url === url);
    if (!source) return inner(url, init);
    const asked = requestedRange(init.headers?.Range ?? init.headers?.range, size);
    if (asked === 'unsatisfiable') return answer(url, 416, 'Range Not Satisfiable', { 'content-range': `bytes */${size}` }, null);
    const { start, end } = asked ?? { start: 0, end: size };
    const headers: Record<string, string> = {
      'accept-ranges': 'bytes',
      'content-type': layout.contentType,
      'content-length': String(end - start),
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(layout.filename)}`,
      ...(asked ? { 'content-range': `bytes ${start}-${end - 1}/${size}` } : {}),
    };
    const status = asked ? 206 : 200;
    const statusText = asked ? 'Partial Content' : 'OK';
    if (init.method === 'HEAD' || start === end) return answer(url, status, statusText, headers, emptyBody());

    const controller = new AbortController();
    const outer = init.signal;
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    outer?.addEventListener('abort', onAbort, { once: true });
    const segment = new SegmentReader(layout, source, inner, init, controller.signal, cipherOf, clock);
    const pieces = piecesOf(offsets, start, end);
    const first = await segment.open(pieces[0]!).catch((error: unknown) => {
      outer?.removeEventListener('abort', onAbort);
      controller.abort(DONE);
      throw error;
    });
    if ('failed' in first) {
      outer?.removeEventListener('abort', onAbort);
      controller.abort(DONE);
      return answer(url, first.failed.status, first.failed.statusText, {}, emptyBody());
    }
    const chunks = segment.bytes(pieces, first);
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(stream) {
          try {
            const { done, value } = await chunks.next();
            if (done) {
              outer?.removeEventListener('abort', onAbort);
              controller.abort(DONE);
              stream.close();
            } else stream.enqueue(value);
          } catch (error) {
            outer?.removeEventListener('abort', onAbort);
            controller.abort(error);
            stream.error(error);
          }
        },
        async cancel(reason) {
          outer?.removeEventListener('abort', onAbort);
          controller.abort(reason);
          await chunks.return(undefined).catch(() => {});
        },
      },
      // A segment's chunk may be lent (the CLI's client reads the next bytes into it): nothing is read ahead.
      { highWaterMark: 0 },
    );
    return answer(url, status, statusText, headers, body);
  };
}

/**
 * A segment that is not what the plan found: asking again gets the same answer, so that host is
 * given up at once (the download fails when it was the only one) instead of retried for ever.
 */
function changed(what: string): MirrorProblem {
  return new MirrorProblem(`${what}: the stream changed since it was planned; download it again`, 'changed');
}

/** Why a request's signal aborts once its bytes were all read. */
const DONE = 'done';

/** A segment's request, answered: what to skip of its body and what to keep. */
interface OpenedPiece {
  piece: PartPiece;
  response: HttpResponse;
  /**
   * Ends the segment's request: a fetch port may count a request as open until its signal aborts
   * (the extension's shares six connections per host so, host-connections.ts).
   */
  close: () => void;
  /** ms from sending its request to its answer: how long before its end the next one is sent. */
  waitMs: number;
  /** Body bytes before the wanted ones (a 200 to a range request sends the whole resource). */
  skip: number;
  /** Body bytes wanted after `skip`. */
  take: number;
  decrypt?: { cipher: AesCbc; iv?: Uint8Array<ArrayBuffer>; dropPlain: number };
}

interface FailedPiece {
  failed: { status: number; statusText: string };
}

/** Plaintext is decrypted in pieces of this many bytes: memory stays bounded on long segments. */
const DECRYPT_BYTES = 256 * 1024;

class SegmentReader {
  constructor(
    private readonly layout: StreamLayout,
    private readonly source: StreamSource,
    private readonly inner: HttpFetch,
    private readonly init: HttpRequest,
    private readonly signal: AbortSignal,
    private readonly cipherOf: (index: number) => Promise<AesCbc>,
    private readonly clock: Pick<Clock, 'now'>,
  ) {}

  private describe(index: number): string {
    return `segment ${index + 1} of ${this.layout.parts.length} (${shown(this.source.uris[index]!)})`;
  }

  /** Sends the piece's request and checks its answer's status and range against the layout. */
  async open(piece: PartPiece): Promise<OpenedPiece | FailedPiece> {
    const part = this.layout.parts[piece.index]!;
    if (part.literal !== undefined) {
      const bytes = hexToBytes(part.literal)!.subarray(piece.start, piece.end);
      const body = new ReadableStream<Uint8Array>({ start: (stream) => (stream.enqueue(bytes), stream.close()) });
      return { piece, response: answer('', 200, 'OK', {}, body), close: () => {}, waitMs: 0, skip: 0, take: bytes.length };
    }
    let from = piece.start;
    let to = piece.end;
    let decrypt: OpenedPiece['decrypt'];
    if (part.key) {
      const firstBlock = Math.floor(piece.start / AES_BLOCK);
      // From the block before the first wanted one: it is that block's IV.
      from = firstBlock === 0 ? 0 : (firstBlock - 1) * AES_BLOCK;
      to = Math.ceil(piece.end / AES_BLOCK) * AES_BLOCK;
      const iv = firstBlock === 0 ? hexToBytes(part.key.iv) : undefined;
      decrypt = { cipher: await this.cipherOf(part.key.index), iv, dropPlain: piece.start - firstBlock * AES_BLOCK };
    }
    from += part.sourceOffset;
    to += part.sourceOffset;
    const headers = { ...withoutRange(this.init.headers), Range: `bytes=${from}-${to - 1}` };
    const own = new AbortController();
    const close = () => own.abort(DONE);
    const signal = AbortSignal.any([this.signal, own.signal]);
    const sentAt = this.clock.now();
    const response = await this.inner(this.source.uris[piece.index]!, { ...this.init, headers, signal }).catch((error: unknown) => {
      close();
      throw error;
    });
    const waitMs = this.clock.now() - sentAt;
    if (response.status === 206) {
      const range = parseContentRange(response.headers.get('content-range'));
      const wrongTotal = range?.kind === 'bytes' && part.resourceSize !== undefined && range.total !== part.resourceSize;
      if (range?.kind !== 'bytes' || range.start !== from || range.end !== to || wrongTotal) {
        await response.body?.cancel().catch(() => {});
        close();
        const sent = range?.kind === 'bytes' ? `bytes ${range.start}–${range.end - 1} of ${range.total ?? '?'}` : 'no valid range';
        throw changed(`${this.describe(piece.index)} sent ${sent} when asked for bytes ${from}–${to - 1} of ${part.resourceSize ?? '?'}`);
      }
      return { piece, response, close, waitMs, skip: 0, take: to - from, decrypt };
    }
    if (response.status === 200) {
      const length = parseContentLength(response.headers.get('content-length'));
      if (part.resourceSize !== undefined && length !== undefined && length !== part.resourceSize) {
        await response.body?.cancel().catch(() => {});
        close();
        throw changed(`${this.describe(piece.index)} has ${length} bytes, not the ${part.resourceSize} it had`);
      }
      return { piece, response, close, waitMs, skip: from, take: to - from, decrypt };
    }
    await response.body?.cancel().catch(() => {});
    close();
    // A CDN's 404 is often a segment not there yet: worth the engine's retries, not a dead source.
    const status = response.status === 404 ? 503 : response.status;
    return { failed: { status, statusText: `${response.statusText || response.status} for ${this.describe(piece.index)}` } };
  }

  /** The pieces' bytes in order, the next piece's request sent as the current one's body nears its end. */
  async *bytes(pieces: readonly PartPiece[], first: OpenedPiece): AsyncGenerator<Uint8Array, void> {
    let opened: OpenedPiece | FailedPiece = first;
    for (let i = 0; i < pieces.length; i++) {
      if ('failed' in opened) throw new Error(`the server answered ${opened.failed.status} ${opened.failed.statusText}`);
      const next = pieces[i + 1];
      let nextOpened: Promise<OpenedPiece | FailedPiece> | undefined;
      const openNext = () => {
        if (!next || nextOpened) return;
        nextOpened = this.open(next);
        // Awaited below, or abandoned with the request: never unhandled.
        nextOpened.catch(() => {});
      };
      yield* this.piece(opened, openNext);
      openNext();
      if (!nextOpened) return;
      opened = await nextOpened;
    }
  }

  /** One piece's bytes; `nearEnd` once the rest of its body should take no longer than its request waited. */
  private async *piece(opened: OpenedPiece, nearEnd: () => void): AsyncGenerator<Uint8Array, void> {
    const { piece, response, decrypt } = opened;
    const { patches } = this.layout.parts[piece.index]!;
    let at = piece.start;
    const reader = response.body?.getReader();
    let skip = opened.skip;
    let left = opened.take;
    let plainLeft = piece.end - piece.start;
    let dropPlain = decrypt?.dropPlain ?? 0;
    let iv = decrypt?.iv;
    const queued: Uint8Array[] = [];
    let queuedBytes = 0;
    let firstAt: number | undefined;
    let received = 0;
    try {
      while (left > 0) {
        const read = await reader?.read();
        if (!read || read.done) throw new Error(`${this.describe(piece.index)} ended ${left} bytes early`);
        let chunk: Uint8Array = read.value;
        // The body's rate since its first chunk says when the rest will be in.
        const now = this.clock.now();
        firstAt ??= now;
        if (received > 0 && now > firstAt && ((left - chunk.length) * (now - firstAt)) / received <= opened.waitMs) nearEnd();
        received += chunk.length;
        [chunk, skip] = dropFront(chunk, skip);
        if (chunk.length > left) chunk = chunk.subarray(0, left);
        left -= chunk.length;
        if (chunk.length === 0) continue;
        if (!decrypt) {
          yield patched(chunk, at, patches);
          at += chunk.length;
          continue;
        }
        // The chunk may be lent: copied once into the queue, joined once per piece decrypted.
        queued.push(chunk.slice());
        queuedBytes += chunk.length;
        if (queuedBytes < DECRYPT_BYTES && left > 0) continue;
        let bytes = joined(queued.splice(0), queuedBytes);
        queuedBytes = 0;
        if (!iv) {
          iv = bytes.slice(0, AES_BLOCK);
          bytes = bytes.subarray(AES_BLOCK);
        }
        const whole = bytes.length - (bytes.length % AES_BLOCK);
        if (whole < bytes.length) {
          queued.push(bytes.slice(whole));
          queuedBytes = bytes.length - whole;
        }
        if (whole > 0) {
          const cipher = bytes.subarray(0, whole);
          let plain = await decrypt.cipher.decryptBlocks(cipher, iv);
          iv = cipher.slice(cipher.length - AES_BLOCK);
          [plain, dropPlain] = dropFront(plain, dropPlain);
          if (plain.length > plainLeft) plain = plain.subarray(0, plainLeft);
          plainLeft -= plain.length;
          if (plain.length > 0) yield plain;
        }
      }
    } finally {
      if (reader) await reader.cancel().catch(() => {});
      opened.close();
    }
  }
}

/** `bytes` without its first `count` bytes, and how many of them are still to drop after it. */
function dropFront<T extends Uint8Array>(bytes: T, count: number): [T, number] {
  const dropped = Math.min(count, bytes.length);
  return [dropped === 0 ? bytes : (bytes.subarray(dropped) as T), count - dropped];
}

function joined(chunks: readonly Uint8Array[], length: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

/** The caller's headers without the range it asked of the whole file. */
function withoutRange(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !/^(range|if-range)$/i.test(name)));
}

/** [start, end) of a `bytes=a-b` or `bytes=a-` request; undefined without a Range header. */
function requestedRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d+)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const start = Number(match[1]);
  const end = match[2] === '' ? size : Math.min(size, Number(match[2]) + 1);
  return start >= size || end <= start ? 'unsatisfiable' : { start, end };
}

function emptyBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (controller) => controller.close() });
}

function answer(
  url: string,
  status: number,
  statusText: string,
  headers: Record<string, string>,
  body: ReadableStream<Uint8Array> | null,
): HttpResponse {
  return {
    status,
    statusText,
    ok: status >= 200 && status < 300,
    url,
    headers: { get: (name) => headers[name.toLowerCase()] ?? null },
    body,
  };
}
