import { PassThrough, Readable, type Transform } from 'node:stream';
import { RefusedResponse, type HttpFetch, type HttpResponse } from '../engine';
import { request, type RawResponse } from './http1-client';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** Statuses whose Response has no body (the Response constructor refuses one). */
const NULL_BODY = new Set([204, 205, 304]);
/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Content codings undone at most: a file is asked for without any, and a server needs no more than two. */
const MAX_CODINGS = 2;
/**
 * How many times its coded size a decoded body may grow: a little over deflate's own limit
 * (1032), so one honest gzip or deflate layer never reaches it; layered or crafted bodies do.
 */
const MAX_EXPANSION = 1100;
/** Decoded bytes allowed before the ratio counts (a tiny coded body of a few hundred KiB). */
const EXPANSION_ALLOWANCE_BYTES = 1024 * 1024;
/** Decoders by content coding; node:zlib is loaded only for a coded body (it costs memory, and downloads rarely are). */
const DECODERS: Record<string, (zlib: typeof import('node:zlib')) => Transform> = {
  gzip: (zlib) => zlib.createGunzip(),
  'x-gzip': (zlib) => zlib.createGunzip(),
  deflate: (zlib) => zlib.createInflate(),
  br: (zlib) => zlib.createBrotliDecompress(),
};

/**
 * `fetch` for the engine, injected by the CLI, over its own HTTP/1.1 client (http1-client.ts).
 * Node's global fetch (undici) and node:http both cost more on a fast link: they allocate a
 * buffer per socket read, and node:http copies each body part once more. It does what the engine
 * asks of fetch: GET and HEAD with headers, redirects (followed up to 20, like fetch, or shown
 * with `redirect: 'manual'` so request-trust.ts checks every hop), bodies asked for without content
 * codings (`Accept-Encoding: identity`) but decoded when a server codes them anyway (gzip, deflate,
 * br; at most two layers, within a bound on their growth), and abort by signal, rejecting or erroring the body with the signal's reason.
 * With `localNetwork: 'refuse'` it connects only to public addresses, judged on the address
 * resolved and connected to (http1-client.ts), and rejects with RefusedResponse otherwise.
 *
 * Unlike fetch, a body chunk is lent: it is valid until the next read from the body, when the
 * connection reuses its memory. The engine copies every chunk before it asks for the next one.
 */
export const nodeFetch: HttpFetch = async (input, init = {}) => {
  const method = init.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') throw new TypeError(`nodeFetch only sends GET and HEAD, not ${String(method)}`);
  const { signal } = init;
  signal?.throwIfAborted();
  const headers = requestHeaders(init.headers ?? {});
  // Files are asked for as they are: a coded body cannot be resumed or spliced, and decoding costs.
  if (!headers.some(([name]) => name === 'accept-encoding')) headers.push(['accept-encoding', 'identity']);
  let url = new URL(input);
  for (let redirects = 0; ; redirects++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) });
    }
    // Every hop is checked against the policy: a redirect followed here cannot lead to a local address either.
    const response = await request(url, method, headers, signal, init.localNetwork);
    const location = headerOf(response, 'location');
    if (!REDIRECTS.has(response.head.status) || location === undefined || init.redirect === 'manual') {
      return toResponse(response, url, method);
    }
    await response.body.cancel();
    if (init.redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`${url.href} redirected to ${location}`) });
    if (redirects === MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error(`more than ${MAX_REDIRECTS} redirects`) });
    const next = new URL(location, url);
    // Like fetch: credentials stay with the origin they were meant for.
    if (next.origin !== url.origin) removeHeader(headers, 'authorization');
    url = next;
  }
};

/** The request's headers, names in lower case; refuses what would break the request line as fetch's Headers does. */
function requestHeaders(given: Record<string, string>): [string, string][] {
  return Object.entries(given).map(([name, value]) => {
    if (!TOKEN.test(name)) throw new TypeError(`"${name}" is not a valid header name`);
    const trimmed = value.trim();
    if (/[\r\n\0]/.test(trimmed)) throw new TypeError(`the value of header "${name}" holds a line break or NUL`);
    return [name.toLowerCase(), trimmed];
  });
}

function removeHeader(headers: [string, string][], name: string): void {
  const at = headers.findIndex(([n]) => n === name);
  if (at >= 0) headers.splice(at, 1);
}

function headerOf(response: RawResponse, name: string): string | undefined {
  return response.head.headers.find(([n]) => n.toLowerCase() === name)?.[1];
}

async function toResponse(raw: RawResponse, url: URL, method: string): Promise<HttpResponse> {
  const headers = new ResponseHeaders(raw.head.headers);
  const { status, statusText } = raw.head;
  const noBody = method === 'HEAD' || NULL_BODY.has(status);
  if (noBody) void raw.body.cancel();
  const body = noBody ? null : await decoded(raw.body, headers.get('content-encoding'));
  return { status, statusText, ok: status >= 200 && status <= 299, url: url.href, headers, body };
}

/** Header lookup as fetch's Headers does it: any case, repeated fields joined with ", ". */
class ResponseHeaders {
  private readonly values = new Map<string, string>();

  constructor(fields: readonly (readonly [string, string])[]) {
    for (const [name, value] of fields) {
      const key = name.toLowerCase();
      const before = this.values.get(key);
      this.values.set(key, before === undefined ? value : `${before}, ${value}`);
    }
  }

  get(name: string): string | null {
    return this.values.get(name.toLowerCase()) ?? null;
  }
}

/**
 * The body with its content codings undone, last applied first (as fetch does; unknown ones stay).
 * Each coding costs a decoder and each layer multiplies what a byte may become: more than
 * MAX_CODINGS is refused before any decoder exists, and a body that grows past MAX_EXPANSION
 * times its coded size is cut.
 */
async function decoded(body: ReadableStream<Uint8Array>, encoding: string | null): Promise<ReadableStream<Uint8Array>> {
  const codings = (encoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length > MAX_CODINGS) {
    await body.cancel().catch(() => {});
    const listed = codings.length > 4 ? `${codings.slice(0, 4).join(', ')}, …` : codings.join(', ');
    throw new RefusedResponse(`the server applied ${codings.length} content codings (${listed}); at most ${MAX_CODINGS} are undone`);
  }
  if (codings.length === 0 || !codings.every((c) => c in DECODERS)) return body;
  // Loaded only for a compressed body, and not with import(): a process started from a snapshot has none.
  const zlib = process.getBuiltinModule('node:zlib');
  const size = { coded: 0, decoded: 0 };
  const decoders = [...codings.reverse().map((c) => DECODERS[c]!(zlib)), expansionGuard(size)];
  const last = decoders.reduce((from, to) => {
    from.on('error', (error) => to.destroy(error));
    return from.pipe(to);
  });
  void feed(body, decoders[0]!, last, size);
  return Readable.toWeb(last) as ReadableStream<Uint8Array>;
}

/** Passes decoded bytes on, and fails once they outgrow what the coded bytes could honestly hold. */
function expansionGuard(size: { coded: number; decoded: number }): Transform {
  return new PassThrough({
    transform(chunk: Buffer, _encoding, done) {
      size.decoded += chunk.length;
      if (size.decoded <= EXPANSION_ALLOWANCE_BYTES + MAX_EXPANSION * size.coded) return done(null, chunk);
      const ratio = Math.round(size.decoded / Math.max(1, size.coded));
      done(new RefusedResponse(`the server's compressed body grew ${ratio} times when decoded (at most ${MAX_EXPANSION})`));
    },
  });
}

/** Writes the lent chunks of `body` into the first decoder (copied: zlib keeps them); ends or fails it. */
async function feed(body: ReadableStream<Uint8Array>, first: Transform, last: Transform, size: { coded: number }): Promise<void> {
  const reader = body.getReader();
  // The reader of the decoded body went away: so does the connection.
  last.once('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size.coded += value.length;
      if (!first.write(Buffer.from(value))) await new Promise((resolve) => first.once('drain', resolve));
    }
    first.end();
  } catch (error) {
    // Readable.toWeb reports what destroyed `last` (the signal's reason on an abort).
    last.destroy(error as Error);
  }
}
