import { Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { request, type RawResponse } from './http1-client';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** Statuses whose Response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([204, 205, 304]);
const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * `fetch` for the engine, injected by the CLI, over its own HTTP/1.1 client (http1-client.ts).
 * Node's global fetch (undici) and node:http both cost more on a fast link: they allocate a
 * buffer per socket read, and node:http copies each body part once more. It does what the engine
 * asks of fetch: GET and HEAD with headers, redirects (followed up to 20, like fetch, or shown
 * with `redirect: 'manual'` so request-trust.ts checks every hop), decoded gzip/deflate/br
 * bodies, and abort by signal, rejecting or erroring the body with the signal's reason.
 *
 * Unlike fetch, a body chunk is lent: it is valid until the next read from the body, when the
 * connection reuses its memory. The engine copies every chunk before it asks for the next one.
 */
export async function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('nodeFetch takes a URL, not a Request');
  const method = (init.method ?? 'GET').toUpperCase();
  if ((method !== 'GET' && method !== 'HEAD') || init.body != null) throw new TypeError(`nodeFetch only sends GET and HEAD, not ${method}`);
  const signal = init.signal ?? undefined;
  signal?.throwIfAborted();
  const headers = new Headers(init.headers);
  if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'gzip, deflate, br');
  let url = new URL(input);
  for (let redirects = 0; ; redirects++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) });
    }
    const response = await request(url, method, headers, signal);
    const location = headerOf(response, 'location');
    if (!REDIRECTS.has(response.head.status) || location === undefined || init.redirect === 'manual') {
      return toResponse(response, url, method);
    }
    await response.body.cancel();
    if (init.redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`${url.href} redirected to ${location}`) });
    if (redirects === MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error(`more than ${MAX_REDIRECTS} redirects`) });
    const next = new URL(location, url);
    // Like fetch: credentials stay with the origin they were meant for.
    if (next.origin !== url.origin) headers.delete('authorization');
    url = next;
  }
}

function headerOf(response: RawResponse, name: string): string | undefined {
  return response.head.headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

function toResponse(raw: RawResponse, url: URL, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of raw.head.headers) headers.append(name, value);
  const { status, statusText } = raw.head;
  const noBody = method === 'HEAD' || NULL_BODY.has(status);
  if (noBody) void raw.body.cancel();
  const body = noBody ? null : decoded(raw.body, headers.get('content-encoding'));
  const response = new Response(body, { status, statusText, headers });
  // A constructed Response has no URL; the engine reads it (redirects, relative links).
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

/** The body with its content codings undone, last applied first (as fetch does; unknown ones stay). */
function decoded(body: ReadableStream<Uint8Array>, encoding: string | null): ReadableStream<Uint8Array> {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0 || !codings.every((c) => c in DECODERS)) return body;
  const decoders = codings.reverse().map((c) => DECODERS[c]!());
  const last = decoders.reduce((from, to) => {
    from.on('error', (error) => to.destroy(error));
    return from.pipe(to);
  });
  void feed(body, decoders[0]!, last);
  return Readable.toWeb(last) as ReadableStream<Uint8Array>;
}

/** Writes the lent chunks of `body` into the first decoder (copied: zlib keeps them); ends or fails it. */
async function feed(body: ReadableStream<Uint8Array>, first: Transform, last: Transform): Promise<void> {
  const reader = body.getReader();
  // The reader of the decoded body went away: so does the connection.
  last.once('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!first.write(Buffer.from(value))) await new Promise((resolve) => first.once('drain', resolve));
    }
    first.end();
  } catch (error) {
    // Readable.toWeb reports what destroyed `last` (the signal's reason on an abort).
    last.destroy(error as Error);
  }
}
