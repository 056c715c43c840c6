import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};
/** Chunks (of up to 64 KiB) a body may hold before the socket is paused. */
const QUEUED_CHUNKS = 4;

/**
 * `fetch` for the engine over node:http, injected by the CLI. Node's global fetch (undici) cost
 * more on a fast link: reading 1 GiB from a loopback server took 0.76–0.78 s of user CPU and
 * 111–122 MB peak RSS with it, 0.44–0.49 s and 94–96 MB this way. It does what the engine asks
 * of fetch: GET and HEAD with headers, redirects (up to 20, like fetch), decoded gzip/deflate/br
 * bodies, and abort by signal, rejecting or erroring the body with the signal's reason.
 */
export async function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('nodeFetch takes a URL, not a Request');
  const method = (init.method ?? 'GET').toUpperCase();
  if ((method !== 'GET' && method !== 'HEAD') || init.body != null) throw new TypeError(`nodeFetch only sends GET and HEAD, not ${method}`);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const headers: OutgoingHttpHeaders = Object.fromEntries(new Headers(init.headers));
  let url = new URL(input);
  for (let redirects = 0; ; redirects++) {
    const response = await send(url, method, headers, signal);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || location === undefined) return toResponse(response, url, method, signal);
    response.destroy();
    if (redirects === MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error(`more than ${MAX_REDIRECTS} redirects`) });
    const next = new URL(location, url);
    // Like fetch: credentials stay with the origin they were meant for.
    if (next.origin !== url.origin) delete headers.authorization;
    url = next;
  }
}

function send(url: URL, method: string, headers: OutgoingHttpHeaders, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) });
  }
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const agent = agents[url.protocol];
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { 'accept-encoding': 'gzip, deflate, br', ...headers }, agent });
    // The reason may be any value (the engine's are symbols): handlers below report it instead.
    const onAbort = () => req.destroy();
    signal?.addEventListener('abort', onAbort, { once: true });
    req.once('response', (response) => {
      response.once('close', () => signal?.removeEventListener('abort', onAbort));
      resolve(response);
    });
    // `on`, not `once`: a socket error after the response is the body's to report, never a crash.
    req.on('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
    });
    req.end();
  });
}

function toResponse(message: IncomingMessage, url: URL, method: string, signal: AbortSignal | undefined): Response {
  const headers = new Headers();
  for (let i = 0; i + 1 < message.rawHeaders.length; i += 2) headers.append(message.rawHeaders[i]!, message.rawHeaders[i + 1]!);
  const status = message.statusCode ?? 0;
  const noBody = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  if (noBody) message.resume();
  const body = noBody ? null : bodyStream(message, decoded(message, headers.get('content-encoding')), signal);
  const response = new Response(body, { status, statusText: message.statusMessage ?? '', headers });
  // A constructed Response has no URL; the engine reads it (redirects, relative links).
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

/** The body with its content codings undone, last applied first (as fetch does; unknown ones stay). */
function decoded(message: IncomingMessage, encoding: string | null): Readable {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  let stream: Readable = message;
  for (const coding of codings.reverse()) {
    const decoder = DECODERS[coding]?.();
    if (!decoder) return message;
    stream.on('error', (error) => decoder.destroy(error));
    stream = stream.pipe(decoder);
  }
  return stream;
}

/** A web stream over a Node one, pausing the socket while the reader is behind. */
function bodyStream(message: IncomingMessage, source: Readable, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  let ended = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const fail = (error: unknown) => {
          if (ended) return;
          ended = true;
          controller.error(signal?.aborted ? signal.reason : new TypeError('terminated', { cause: error }));
        };
        source.on('data', (chunk: Buffer) => {
          // Chunks already read from the socket still come after a cancel or an error.
          if (ended) return;
          // A plain view: Buffer's slice() would not copy, Uint8Array's does.
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
          if ((controller.desiredSize ?? 0) <= 0) source.pause();
        });
        source.once('end', () => {
          if (ended) return;
          ended = true;
          controller.close();
        });
        source.on('error', fail);
        // A connection that closes before the end of the body (reset, abort) is an error.
        message.once('close', () => {
          if (!message.complete) fail(new Error('the connection closed before the end of the body'));
        });
      },
      pull() {
        source.resume();
      },
      cancel() {
        ended = true;
        message.destroy();
        if (source !== message) source.destroy();
      },
    },
    { highWaterMark: QUEUED_CHUNKS },
  );
}
