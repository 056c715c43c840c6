import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { connect as netConnect, isIP, type LookupFunction, type Socket } from 'node:net';
import { RefusedResponse } from '../engine';
import { isLocalAddress } from '../engine/http/address-class';
import { ResponseParseError, ResponseParser, type ResponseHead } from './http1-parser';

/**
 * Bytes read from a plain socket at once, into one buffer per connection reused for every read:
 * Node's own reads allocate a fresh 64 KiB buffer each, which at a gigabyte a second is what
 * filled the CLI's memory (and kept the garbage collector busy). Larger buffers cost memory per
 * connection (the CLI may open dozens) and saved no measurable CPU.
 */
const READ_BUFFER_BYTES = 64 * 1024;
/** An idle connection is closed after this long (servers often close theirs after 5 s). */
const IDLE_MS = 4000;

export interface RawResponse {
  head: ResponseHead;
  /**
   * The body as sent (content codings not undone). Each chunk is lent: it is valid until the next
   * read from the stream (or a cancel), when the connection reads its next bytes into the same memory.
   */
  body: ReadableStream<Uint8Array>;
}

/** A reused connection closed before any byte of the answer: the request goes again on a fresh one. */
class StaleConnection extends Error {}

/** Whether a request may connect to a local address (HttpRequest.localNetwork). */
export type LocalNetwork = 'allow' | 'refuse';

/** A connection to one origin, carrying one request at a time. */
class Connection {
  readonly socket: Socket;
  /** Gets what the socket reads; false pauses reading until `resume`. */
  onBytes: ((bytes: Uint8Array) => boolean) | undefined;
  /** Called once when the socket closes, with its error if it failed. */
  onGone: ((error: Error | undefined) => void) | undefined;
  gone = false;
  /** Whether it carried a request before (a closed idle connection is then worth one retry). */
  reused = false;

  constructor(
    url: URL,
    readonly key: string,
    tls: typeof import('node:tls') | undefined,
    localNetwork: LocalNetwork,
  ) {
    const host = hostOf(url);
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
    // An IP literal is not looked up (request checked it); a name is resolved, checked and
    // connected to in one step.
    const lookup = localNetwork === 'refuse' ? publicOnly : undefined;
    if (tls) {
      this.socket = tls.connect({ host, port, lookup, servername: isIP(host) ? undefined : host, ALPNProtocols: ['http/1.1'] });
      this.socket.on('data', (chunk: Buffer) => {
        if (!this.deliver(chunk)) this.socket.pause();
      });
    } else {
      const buffer = new Uint8Array(READ_BUFFER_BYTES);
      this.socket = netConnect({ host, port, lookup, onread: { buffer, callback: (read) => this.deliver(buffer.subarray(0, read)) } });
    }
    this.socket.setNoDelay(true);
    // Only idle connections have a timeout (see release).
    this.socket.on('timeout', () => this.socket.destroy());
    this.socket.on('error', (error) => this.close(error));
    this.socket.on('close', () => this.close(undefined));
  }

  private deliver(bytes: Uint8Array): boolean {
    if (this.onBytes) return this.onBytes(bytes);
    // Nothing was asked on an idle connection: bytes there mean it is out of step.
    this.socket.destroy();
    return false;
  }

  private close(error: Error | undefined): void {
    if (this.gone) return;
    this.gone = true;
    forgetIdle(this);
    this.onGone?.(error);
  }
}

/**
 * `lookup` for a connection that may not reach a local address: resolves the name as Node would
 * and fails with RefusedResponse when an address it gives is local, so the socket connects only
 * to an address checked here (no second resolution for a rebinding name to answer differently).
 * One local address refuses the name, even beside public ones: such a name is aimed at the user's
 * network, and which address a connection gets should not decide what it reaches.
 */
const publicOnly: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '');
    const local = addresses.find(({ address }) => isLocalAddress(address));
    if (local) return callback(localRefusal(hostname, local.address), '');
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

function localRefusal(host: string, address: string): RefusedResponse {
  const what = host === address ? `${address} is` : `${host} resolved to ${address},`;
  return new RefusedResponse(`${what} a local or private network address, and the download is not`);
}

const idle = new Map<string, Connection[]>();

function takeIdle(key: string): Connection | undefined {
  const connection = idle.get(key)?.pop();
  if (!connection) return undefined;
  connection.socket.setTimeout(0);
  connection.socket.ref();
  return connection;
}

function release(connection: Connection): void {
  connection.onBytes = undefined;
  connection.onGone = undefined;
  connection.reused = true;
  const { socket } = connection;
  // Reading on while idle notices the server closing it; an idle socket keeps no process alive.
  socket.resume();
  socket.unref();
  socket.setTimeout(IDLE_MS);
  const list = idle.get(connection.key) ?? [];
  list.push(connection);
  idle.set(connection.key, list);
}

function forgetIdle(connection: Connection): void {
  const list = idle.get(connection.key);
  const at = list?.indexOf(connection) ?? -1;
  if (at >= 0) list!.splice(at, 1);
  if (list?.length === 0) idle.delete(connection.key);
}

/**
 * Sends a GET or HEAD over HTTP/1.1 (a kept-alive connection to the origin when there is one)
 * and resolves at the response head. Rejects with the signal's reason when aborted, and with
 * TypeError('fetch failed') carrying the socket's error (ECONNREFUSED, ENOTFOUND, …) otherwise,
 * as fetch does. The body errors the same way: TypeError('terminated') or the signal's reason. An
 * answer that breaks HTTP/1.1 or the parser's limits rejects (or errors the body) with RefusedResponse.
 * With `localNetwork` 'refuse', so does a host that is, or resolves to, a local address
 * (address-class.ts), before anything is sent to it.
 */
export async function request(
  url: URL,
  method: string,
  headers: Iterable<[string, string]>,
  signal?: AbortSignal,
  localNetwork: LocalNetwork = 'allow',
): Promise<RawResponse> {
  const host = hostOf(url);
  if (localNetwork === 'refuse' && isIP(host) !== 0 && isLocalAddress(host)) throw localRefusal(host, host);
  const head = requestHead(url, method, headers);
  // Connections are kept per policy: one made to a local address where that was allowed is never
  // lent to a request that must not reach one.
  const key = `${url.protocol}//${url.host} ${localNetwork}`;
  const reused = takeIdle(key);
  if (reused) {
    try {
      return await exchange(reused, head, method, signal);
    } catch (error) {
      if (!(error instanceof StaleConnection)) throw error;
    }
  }
  // node:tls costs ~3 MiB of memory once loaded: only https downloads load it. (Not with import(): a
  // process started from the launcher's snapshot has no dynamic import.)
  const tls = url.protocol === 'https:' ? process.getBuiltinModule('node:tls') : undefined;
  return exchange(new Connection(url, key, tls, localNetwork), head, method, signal);
}

/** The URL's host as sockets take it: an IPv6 address without its brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function requestHead(url: URL, method: string, headers: Iterable<[string, string]>): string {
  let text = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  // Names and values were checked by nodeFetch (requestHeaders): no CR, LF or NUL.
  for (const [name, value] of headers) if (name !== 'host') text += `${name}: ${value}\r\n`;
  return `${text}\r\n`;
}

function exchange(connection: Connection, head: string, method: string, signal: AbortSignal | undefined): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    let body: ReadableStreamDefaultController<Uint8Array> | undefined;
    /** Chunks handed to the reader since it last asked for more: the read buffer is theirs until then. */
    let lent = false;
    let ended = false;
    /** Past the end or a failure: the connection is released or destroyed. */
    let finished = false;

    const finish = (keep: boolean) => {
      if (finished) return;
      finished = true;
      signal?.removeEventListener('abort', onAbort);
      if (keep && !connection.gone) release(connection);
      else connection.socket.destroy();
    };
    /** The body ended and the reader holds no chunk: close it and let the connection go. */
    const complete = () => {
      body!.close();
      finish(parser.reusable);
    };
    const fail = (error: unknown) => {
      if (finished) return;
      finish(false);
      if (body) body.error(error);
      else reject(error);
    };
    const onAbort = () => fail(signal!.reason);

    const parser = new ResponseParser(method, {
      head: (responseHead) => {
        const stream = new ReadableStream<Uint8Array>(
          {
            start: (controller) => void (body = controller),
            pull: () => {
              lent = false;
              if (ended) complete();
              else connection.socket.resume();
            },
            cancel: () => finish(ended && parser.reusable),
          },
          { highWaterMark: 0 },
        );
        resolve({ head: responseHead, body: stream });
      },
      body: (chunk) => {
        body!.enqueue(chunk);
        lent = true;
      },
      end: () => void (ended = true),
    });

    connection.onBytes = (bytes) => {
      if (finished) return false;
      try {
        parser.execute(bytes);
      } catch (error) {
        fail(refusal(error) ?? new TypeError(body ? 'terminated' : 'fetch failed', { cause: error }));
        return false;
      }
      if (!ended) return !lent;
      // Released (reading on while idle) unless the reader still holds a chunk.
      if (!lent) complete();
      return !lent;
    };
    connection.onGone = (error) => {
      if (finished) return;
      if (!body && connection.reused && !parser.started) {
        finish(false);
        reject(new StaleConnection());
        return;
      }
      let problem = error;
      if (!problem) {
        try {
          parser.close();
        } catch (cut) {
          problem = parser.started ? (cut as Error) : hangUp();
        }
      }
      // A refused address (publicOnly) is the answer the same name would give again: not a network error.
      if (problem instanceof RefusedResponse) fail(problem);
      else if (problem) fail(new TypeError(body ? 'terminated' : 'fetch failed', { cause: problem }));
      // A body that runs to the close: the reader gets the end once it is done with its chunk.
      else if (!lent) complete();
    };

    if (signal?.aborted) {
      fail(signal.reason);
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    connection.socket.write(head, 'latin1');
  });
}

/**
 * An answer that breaks HTTP/1.1 or the parser's limits (not one cut short) would be the same if
 * asked again: the engine gives its source up instead of retrying it.
 */
function refusal(error: unknown): RefusedResponse | undefined {
  if (!(error instanceof ResponseParseError) || error.code === 'HPE_TRUNCATED') return undefined;
  return new RefusedResponse(`the server's answer breaks HTTP/1.1: ${error.message}`);
}

/** What Node's own client reports when a connection closes before any answer. */
function hangUp(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}
