/**
 * A small, strict HTTP/1.1 response parser for the CLI's own client (node-fetch.ts). It is fed the
 * bytes of one connection as they are read and hands the body on as views of those same bytes (no
 * copy): the caller decides how long a view stays valid. Whatever it does not understand is an
 * error, never a guess: a bad status line or header, a bad or conflicting Content-Length, a
 * Transfer-Encoding other than chunked or next to a Content-Length, a malformed chunk-size line, a
 * head or chunk line past its size limit. Where RFC 9112 leaves room, it does what llhttp (Node's
 * parser) does in its default, strict mode.
 */

export interface ResponseHead {
  status: number;
  statusText: string;
  /** Header names and values as sent, in order (values as Latin-1, as Node and browsers read them). */
  headers: Array<[name: string, value: string]>;
}

export interface ResponseSink {
  head(head: ResponseHead): void;
  /** A part of the body: a view of the bytes given to `execute`. */
  body(chunk: Uint8Array): void;
  /** The response ended (the parser's `reusable` says whether the connection may carry another). */
  end(): void;
}

export interface ParserLimits {
  /** Largest status line plus headers (and largest trailer section). */
  maxHeadBytes: number;
  /** Largest chunk-size line, extensions included. */
  maxChunkLineBytes: number;
}

export const DEFAULT_LIMITS: ParserLimits = { maxHeadBytes: 64 * 1024, maxChunkLineBytes: 1024 };

/** The response broke HTTP/1.1; `code` names the kind, as Node's parser errors do. */
export class ResponseParseError extends Error {
  override readonly name = 'ResponseParseError';
  constructor(
    message: string,
    readonly code: 'HPE_INVALID' | 'HPE_HEADER_OVERFLOW' | 'HPE_TRUNCATED' = 'HPE_INVALID',
  ) {
    super(message);
  }
}

type State = 'head' | 'length' | 'close' | 'chunk-line' | 'chunk-data' | 'chunk-end' | 'trailers' | 'done';

const CR = 0x0d;
const LF = 0x0a;
const TCHAR = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]";
const TOKEN = new RegExp(`^${TCHAR}+$`);
/** quoted-string: qdtext (tab, space, visible characters but `"` and backslash, obs-text), or a backslash and the byte it quotes. */
const QUOTED_STRING = String.raw`"(?:[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]|\\[\t\x20-\x7e\x80-\xff])*"`;
/**
 * A chunk-size line (RFC 9112, section 7.1): hex digits (at most 13 after leading zeros, so the
 * size is a safe integer), then extensions `;name` or `;name=value`, the value a token or a quoted-string. No
 * whitespace anywhere: llhttp refuses it, and a line one parser reads otherwise than another is how
 * a body gets smuggled.
 */
const CHUNK_LINE = new RegExp(`^0*([0-9A-Fa-f]{1,13})(?:;${TCHAR}+(?:=(?:${TCHAR}+|${QUOTED_STRING}))?)*\r\n$`);
/** Field values: visible characters, spaces, tabs and obs-text; nothing else (no NUL, no CR, no LF). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: ([\t\x20-\x7e\x80-\xff]*))?$/;

/** Parses one response of a connection; a new parser per request. */
export class ResponseParser {
  private state: State = 'head';
  /** Bytes of a head, chunk line or trailer section not yet complete. */
  private pending: Uint8Array = new Uint8Array(0);
  private remaining = 0;
  private keepAlive = true;
  private sawBytes = false;

  constructor(
    private readonly method: string,
    private readonly sink: ResponseSink,
    private readonly limits: ParserLimits = DEFAULT_LIMITS,
  ) {}

  /** Whether any byte of the response arrived (a reused connection closing before one may be retried). */
  get started(): boolean {
    return this.sawBytes;
  }

  /** False once anything says the connection must not carry another request. */
  get reusable(): boolean {
    return this.keepAlive;
  }

  get done(): boolean {
    return this.state === 'done';
  }

  /** Parses the next bytes of the connection; throws ResponseParseError on a broken response. */
  execute(data: Uint8Array): void {
    if (data.length > 0) this.sawBytes = true;
    let at = 0;
    while (at < data.length) {
      switch (this.state) {
        case 'head':
          // Empty lines before a status line are skipped, as llhttp does: aiohttp sends one after 100 Continue.
          if (this.pending.length === 0 && (data[at] === CR || data[at] === LF)) at++;
          else at = this.takeLine(data, at);
          break;
        case 'trailers':
        case 'chunk-line':
          at = this.takeLine(data, at);
          break;
        case 'length': {
          const take = Math.min(this.remaining, data.length - at);
          this.remaining -= take;
          this.sink.body(data.subarray(at, at + take));
          at += take;
          if (this.remaining === 0) this.finish();
          break;
        }
        case 'chunk-data': {
          const take = Math.min(this.remaining, data.length - at);
          this.remaining -= take;
          if (take > 0) this.sink.body(data.subarray(at, at + take));
          at += take;
          if (this.remaining === 0) this.state = 'chunk-end';
          break;
        }
        case 'chunk-end':
          at = this.takeLine(data, at);
          break;
        case 'close':
          this.sink.body(data.subarray(at));
          at = data.length;
          break;
        case 'done':
          // Bytes after the end of the response: nothing was asked for them, so the connection is not reused.
          this.keepAlive = false;
          return;
      }
    }
  }

  /** The connection closed: ends a body that runs to the close, else throws (the response was cut). */
  close(): void {
    if (this.state === 'done') return;
    if (this.state === 'close') {
      this.keepAlive = false;
      this.finish();
      return;
    }
    const where = this.state === 'head' ? 'in the response headers' : 'before the end of the body';
    throw new ResponseParseError(`the connection closed ${where}`, 'HPE_TRUNCATED');
  }

  /**
   * Gathers bytes up to the end of a line (the head and trailer sections: up to an empty line) and
   * hands them to the state's handler; returns where it stopped in `data`.
   */
  private takeLine(data: Uint8Array, at: number): number {
    const section = this.state === 'head' || this.state === 'trailers';
    const limit = section ? this.limits.maxHeadBytes : this.state === 'chunk-line' ? this.limits.maxChunkLineBytes : 2;
    const end = section ? sectionEnd(this.pending, data, at) : lineEnd(this.pending, data, at);
    if (end === -1) {
      if (this.pending.length + data.length - at > limit) throw this.tooLong();
      this.pending = concat(this.pending, data.subarray(at));
      return data.length;
    }
    if (this.pending.length + end - at > limit) throw this.tooLong();
    const text = latin1(concat(this.pending, data.subarray(at, end)));
    this.pending = new Uint8Array(0);
    if (this.state === 'head') this.onHead(text);
    else if (this.state === 'trailers') this.onTrailers(text);
    else if (this.state === 'chunk-line') this.onChunkLine(text);
    else if (text !== '\r\n') throw new ResponseParseError('a chunk of the body does not end where its size said');
    else this.state = 'chunk-line';
    return end;
  }

  private tooLong(): ResponseParseError {
    if (this.state === 'chunk-line') return new ResponseParseError('a chunk-size line is too long', 'HPE_HEADER_OVERFLOW');
    if (this.state === 'chunk-end') return new ResponseParseError('a chunk of the body does not end where its size said');
    return new ResponseParseError(`the response headers are larger than ${this.limits.maxHeadBytes} bytes`, 'HPE_HEADER_OVERFLOW');
  }

  private onHead(text: string): void {
    const lines = text.slice(0, -4).split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) throw new ResponseParseError(`"${printable(lines[0]!)}" is not an HTTP/1.x status line`);
    const headers = lines.slice(1).map(parseField);
    // Two framings at once is the request-smuggling shape: RFC 9112 (section 6.3) says to handle it
    // as an error, and llhttp does, on every response (HEAD, 204 and 1xx answers included).
    if (values(headers, 'transfer-encoding').length > 0 && values(headers, 'content-length').length > 0) {
      throw new ResponseParseError('the response has both Content-Length and Transfer-Encoding');
    }
    const code = Number(status[2]);
    if (code === 101) throw new ResponseParseError('the server switched protocols, which nothing asked for');
    // Interim answers (100 Continue, 103 Early Hints) come before the real one.
    if (code < 200) return;
    if (status[1] === '0' || values(headers, 'connection').some((v) => /(^|,)\s*close\s*(,|$)/i.test(v))) this.keepAlive = false;
    // Framing is checked before the head is handed on: a response with a broken one is no response.
    const framing = this.framing(code, headers);
    this.sink.head({ status: code, statusText: status[3] ?? '', headers });
    this.remaining = framing.length;
    if (framing.state === 'done' || (framing.state === 'length' && framing.length === 0)) this.finish();
    else this.state = framing.state;
  }

  /** How the body is delimited (RFC 9112, section 6.3). */
  private framing(status: number, headers: Array<[string, string]>): { state: 'done' | 'length' | 'close' | 'chunk-line'; length: number } {
    if (this.method === 'HEAD' || status === 204 || status === 304) return { state: 'done', length: 0 };
    const codings = values(headers, 'transfer-encoding');
    if (codings.length > 0) {
      if (codings.some((v) => v.trim().toLowerCase() !== 'chunked') || codings.length > 1) {
        throw new ResponseParseError(
          `the server sent the body with Transfer-Encoding "${printable(codings.join(', '))}", which is not supported`,
        );
      }
      return { state: 'chunk-line', length: 0 };
    }
    const length = contentLength(headers);
    if (length !== undefined) return { state: 'length', length };
    this.keepAlive = false;
    return { state: 'close', length: 0 };
  }

  private onChunkLine(text: string): void {
    const size = CHUNK_LINE.exec(text);
    if (!size) throw new ResponseParseError(`"${printable(text.slice(0, -2))}" is not a valid chunk-size line`);
    this.remaining = parseInt(size[1]!, 16);
    this.state = this.remaining === 0 ? 'trailers' : 'chunk-data';
  }

  private onTrailers(text: string): void {
    // Trailers are read and checked, not used (the engine reads digests from the headers).
    const trailers = text === '\r\n' ? [] : text.slice(0, -4).split('\r\n').map(parseField);
    // A length after a chunked body is the same conflict as one next to it in the head (llhttp refuses it too).
    if (values(trailers, 'content-length').length > 0) throw new ResponseParseError('the trailers have a Content-Length');
    this.finish();
  }

  private finish(): void {
    this.state = 'done';
    this.sink.end();
  }
}

/** Index in `data` just past the CRLF that ends the line begun in `pending`, or -1. */
function lineEnd(pending: Uint8Array, data: Uint8Array, at: number): number {
  if (pending.length > 0 && pending[pending.length - 1] === CR && data[at] === LF) return at + 1;
  for (let i = at; i + 1 < data.length; i++) if (data[i] === CR && data[i + 1] === LF) return i + 2;
  return -1;
}

/**
 * Index in `data` just past the empty line that ends a head or trailer section begun in
 * `pending`, or -1. A section with no fields is the empty line alone.
 */
function sectionEnd(pending: Uint8Array, data: Uint8Array, at: number): number {
  // Bytes before `at` are the section's start in `pending`, not what `data` held there.
  const byte = (i: number) => (i >= at ? data[i] : pending[pending.length - (at - i)]);
  for (let i = at; i < data.length; i++) {
    if (data[i] !== LF || byte(i - 1) !== CR) continue;
    const fromStart = pending.length + (i - at) + 1;
    // The section is the empty line alone, or its last field line is followed by one.
    if (fromStart === 2 || (byte(i - 2) === LF && byte(i - 3) === CR)) return i + 1;
  }
  return -1;
}

function parseField(line: string): [string, string] {
  const colon = line.indexOf(':');
  const name = line.slice(0, Math.max(colon, 0));
  const value = line.slice(colon + 1).replace(/^[\t ]+|[\t ]+$/g, '');
  // A line starting with a space folds onto the previous one (obsolete, refused by RFC 9112).
  if (colon <= 0 || !TOKEN.test(name) || !FIELD_VALUE.test(value)) {
    throw new ResponseParseError(`"${printable(line)}" is not a valid header line`);
  }
  return [name, value];
}

function values(headers: Array<[string, string]>, name: string): string[] {
  return headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
}

/** The body's length; repeated equal values are one value, as RFC 9110 allows; any other mix is an error. */
function contentLength(headers: Array<[string, string]>): number | undefined {
  const all = values(headers, 'content-length').flatMap((v) => v.split(',').map((part) => part.trim()));
  if (all.length === 0) return undefined;
  const distinct = new Set(all);
  const [only] = distinct;
  if (distinct.size > 1 || !/^\d{1,15}$/.test(only!)) {
    throw new ResponseParseError(`Content-Length "${printable(all.join(', '))}" is not one number of bytes`);
  }
  return Number(only);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
}

/** A bounded, escaped excerpt of what the server sent, for a message. */
function printable(text: string): string {
  const escaped = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
  return escaped.slice(1, -1);
}
