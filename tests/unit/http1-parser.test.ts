import { describe, expect, it } from 'vitest';
import { ResponseParseError, ResponseParser, type ParserLimits, type ResponseHead } from '../../src/cli/http1-parser';

const bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

/** Feeds `parts` in order and records what the parser reported. */
function parse(parts: Array<string | Uint8Array>, method = 'GET', limits?: ParserLimits) {
  const heads: ResponseHead[] = [];
  const body: number[] = [];
  let ended = 0;
  const parser = new ResponseParser(
    method,
    {
      head: (head) => heads.push(head),
      body: (chunk) => body.push(...chunk),
      end: () => ended++,
    },
    limits,
  );
  for (const part of parts) parser.execute(typeof part === 'string' ? bytes(part) : part);
  // Getters: what the parser reports after a later close() counts too.
  return {
    heads,
    get body() {
      return String.fromCharCode(...body);
    },
    get ended() {
      return ended;
    },
    parser,
  };
}

/** `text` cut into pieces of `size` bytes. */
const pieces = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

const CHUNKED =
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n5;ext=1\r\nhello\r\n1A\r\n, chunked bodies work fine\r\n0\r\nX-Trailer: t\r\n\r\n';

describe('ResponseParser', () => {
  it('reads a head and a Content-Length body, whatever the reads split', () => {
    const text = 'HTTP/1.1 206 Partial Content\r\nContent-Length: 11\r\nContent-Range: bytes 0-10/99\r\n\r\nhello world';
    for (const size of [1, 2, 3, 5, 17, text.length]) {
      const { heads, body, ended, parser } = parse(pieces(text, size));
      expect(heads).toEqual([
        {
          status: 206,
          statusText: 'Partial Content',
          headers: [
            ['Content-Length', '11'],
            ['Content-Range', 'bytes 0-10/99'],
          ],
        },
      ]);
      expect(body).toBe('hello world');
      expect(ended).toBe(1);
      expect(parser.reusable).toBe(true);
    }
  });

  it('hands the body on as views of the bytes it was given (no copy)', () => {
    const data = bytes('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd');
    const views: Uint8Array[] = [];
    new ResponseParser('GET', { head: () => {}, body: (chunk) => views.push(chunk), end: () => {} }).execute(data);
    expect(views).toHaveLength(1);
    expect(views[0]!.buffer).toBe(data.buffer);
    expect(views[0]!.byteOffset).toBe(data.length - 4);
  });

  it('decodes chunked bodies split anywhere, size lines, chunk ends and trailers included', () => {
    for (const size of [1, 2, 4, 7, 64, CHUNKED.length]) {
      const { heads, body, ended, parser } = parse(pieces(CHUNKED, size));
      expect(heads[0]!.status).toBe(200);
      expect(body).toBe('hello, chunked bodies work fine');
      expect(ended).toBe(1);
      expect(parser.reusable).toBe(true);
    }
  });

  it('reads a body without length to the close, and does not reuse the connection', () => {
    const result = parse(['HTTP/1.1 200 OK\r\n\r\nsome', ' bytes']);
    expect(result.ended).toBe(0);
    result.parser.close();
    expect(result.body).toBe('some bytes');
    expect(result.ended).toBe(1);
    expect(result.parser.reusable).toBe(false);
  });

  it('gives HEAD, 204 and 304 answers no body, whatever their length says', () => {
    expect(parse(['HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n'], 'HEAD').ended).toBe(1);
    expect(parse(['HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n']).ended).toBe(1);
    expect(parse(['HTTP/1.1 304 Not Modified\r\n\r\n']).ended).toBe(1);
  });

  it('skips interim answers (100, 103) before the real one', () => {
    const { heads, body } = parse(['HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok']);
    expect(heads.map((h) => h.status)).toEqual([200]);
    expect(body).toBe('ok');
  });

  it('does not reuse a connection the server closes, that speaks HTTP/1.0, or that sent bytes past the end', () => {
    expect(parse(['HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n']).parser.reusable).toBe(false);
    expect(parse(['HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n']).parser.reusable).toBe(false);
    expect(parse(['HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy']).parser.reusable).toBe(false);
  });

  it('accepts repeated equal lengths and refuses lengths that disagree or are not numbers', () => {
    expect(parse(['HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok']).body).toBe('ok');
    for (const length of ['2, 3', '-1', '0x10', '1e3', '', '99999999999999999']) {
      expect(() => parse([`HTTP/1.1 200 OK\r\nContent-Length: ${length}\r\n\r\n`]), length).toThrow(
        /Content-Length .* is not one number of bytes/,
      );
    }
  });

  it('refuses transfer codings other than chunked, and bad chunk sizes and ends', () => {
    expect(() => parse(['HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n'])).toThrow(/Transfer-Encoding "gzip, chunked"/);
    expect(() => parse(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'])).toThrow(/"zz" is not a valid chunk-size line/);
    expect(() => parse(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n'])).toThrow(/does not end where its size said/);
  });

  it('refuses broken status lines and header lines', () => {
    for (const head of [
      'HTTP/2 200 OK\r\n\r\n',
      'HTTP/1.1 20 OK\r\n\r\n',
      'HTTP/1.1 600 Odd\r\n\r\n',
      'ICY 200 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\nNo-Colon\r\n\r\n',
      'HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n',
      'HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n',
      'HTTP/1.1 200 OK\r\nA: nul\0here\r\n\r\n',
      'HTTP/1.1 200 OK\r\nA: bare\nlf\r\n\r\n',
      'HTTP/1.1 101 Switching Protocols\r\n\r\n',
    ]) {
      expect(() => parse([head]), JSON.stringify(head)).toThrow(ResponseParseError);
    }
  });

  it('refuses a head, a trailer section or a chunk line larger than its limit, even split across reads', () => {
    const limits = { maxHeadBytes: 100, maxChunkLineBytes: 10 };
    const longHead = `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(100)}\r\n\r\n`;
    expect(() => parse(pieces(longHead, 7), 'GET', limits)).toThrow(expect.objectContaining({ code: 'HPE_HEADER_OVERFLOW' }));
    // Under the limit before its last read, over it with the end.
    expect(() => parse([longHead.slice(0, 60), longHead.slice(60)], 'GET', limits)).toThrow(/larger than 100 bytes/);
    // An endless head that never ends is refused at the limit, not buffered.
    expect(() =>
      parse(
        Array.from({ length: 50 }, () => 'X: 1\r\n'),
        'GET',
        limits,
      ),
    ).toThrow(/larger than 100 bytes/);
    const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
    expect(() => parse([chunked, `1;${'e'.repeat(20)}\r\n`], 'GET', limits)).toThrow(/chunk-size line is too long/);
    expect(() => parse([chunked, '0\r\n', `T: ${'t'.repeat(100)}`], 'GET', limits)).toThrow(/larger than 100 bytes/);
  });

  it('says where a response was cut when the connection closes early', () => {
    expect(() => parse(['HTTP/1.1 200 OK\r\nContent-Le']).parser.close()).toThrow(/closed in the response headers/);
    expect(() => parse(['HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc']).parser.close()).toThrow(/closed before the end of the body/);
    expect(() => parse([CHUNKED.slice(0, -2)]).parser.close()).toThrow(/closed before the end of the body/);
  });
});

/** `text` as one read, cut in two at every byte, and one byte per read. */
function feeds(text: string): string[][] {
  const halves = Array.from({ length: text.length - 1 }, (_, i) => [text.slice(0, i + 1), text.slice(i + 1)]);
  return [[text], ...halves, pieces(text, 1)];
}

/** What the parser made of `parts` followed by the connection's close: statuses handed on, body, ends, error. */
function outcome(parts: string[], method = 'GET') {
  const heads: number[] = [];
  let body = '';
  let ended = 0;
  const parser = new ResponseParser(method, {
    head: (head) => heads.push(head.status),
    body: (chunk) => (body += String.fromCharCode(...chunk)),
    end: () => ended++,
  });
  try {
    for (const part of parts) parser.execute(bytes(part));
    parser.close();
  } catch (error) {
    expect(error).toBeInstanceOf(ResponseParseError);
    return { heads, ended, error: (error as Error).message };
  }
  return { heads, body, ended, reusable: parser.reusable };
}

/** Every feed of `text` gives the one response with `body`, on a connection fit for another request. */
function expectAccepted(text: string, body: string, method = 'GET') {
  for (const feed of feeds(text)) {
    expect(outcome(feed, method), JSON.stringify(feed)).toEqual({ heads: [200], body, ended: 1, reusable: true });
  }
}

/** Every feed of `text` is refused with `error`, after handing on the statuses in `heads`, and ends nothing. */
function expectRefused(text: string, error: string, heads: number[], method = 'GET') {
  for (const feed of feeds(text)) expect(outcome(feed, method), JSON.stringify(feed)).toEqual({ heads, ended: 0, error });
}

describe('ResponseParser, strict where llhttp is (each case whole and split at every byte)', () => {
  const CHUNKED_HEAD = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';

  it('refuses a response with both Content-Length and Transfer-Encoding, before handing on its head', () => {
    const both = 'the response has both Content-Length and Transfer-Encoding';
    for (const text of [
      'HTTP/1.1 200 OK\r\nContent-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n7\r\nsmuggle\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      // A length that agrees with the chunks, or names in any case, change nothing.
      'HTTP/1.1 206 Partial Content\r\ntransfer-encoding: chunked\r\nCONTENT-LENGTH: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 20\r\nTransfer-Encoding: gzip\r\n\r\n',
      // Answers without a body too, and an interim one before a sound final answer.
      'HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n',
      'HTTP/1.1 100 Continue\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    ]) {
      expectRefused(text, both, []);
    }
    expectRefused('HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n', both, [], 'HEAD');
    // The same conflict after the body: a length among the trailers.
    expectRefused(`${CHUNKED_HEAD}3\r\nabc\r\n0\r\nContent-Length: 3\r\n\r\n`, 'the trailers have a Content-Length', [200]);
  });

  it('reads chunked bodies without a Content-Length, and trailers whose names only look like one', () => {
    expectAccepted(`${CHUNKED_HEAD}3\r\nabc\r\n0\r\n\r\n`, 'abc');
    expectAccepted(`${CHUNKED_HEAD}3\r\nabc\r\n0\r\nX-Content-Length: 3\r\nContent-Lengths: 4\r\n\r\n`, 'abc');
  });

  it('reads chunk-size lines of hex digits and well-formed extensions', () => {
    for (const line of [
      '5',
      '0005',
      '00000000000000000005',
      '5;name',
      '5;a=b;c;d=e',
      "5;tok=!#$%&'*+-.^_`|~09AZaz",
      '5;q="semi;colon = \\"quoted\\" back\\\\slash\ttab"',
      '5;empty=""',
      '5;latin="caf\xe9 \\\xe9"',
    ]) {
      expectAccepted(`${CHUNKED_HEAD}${line}\r\nhello\r\n0\r\n\r\n`, 'hello');
    }
    expectAccepted(`${CHUNKED_HEAD}a\r\n0123456789\r\nB\r\nabcdefghijk\r\n000;last="yes"\r\nX-T: 1\r\n\r\n`, '0123456789abcdefghijk');
  });

  it('refuses chunk-size lines with whitespace, malformed extensions or no hex size', () => {
    for (const line of [
      '5 ',
      '5\t',
      ' 5',
      '5 ;a=b',
      '5; a',
      '5;a =b',
      '5;a= b',
      '5;a=b ',
      '5;',
      '5;a/b',
      '5;n\xe9',
      '5;a="open',
      '5;a="one"two',
      '5;a="del\x7f"',
      '5;a="\\\0"',
      '5\r',
      '5\nhello',
      '',
      '0x5',
      '+5',
      '-5',
      // These llhttp lets through, but RFC 9112's grammar does not: an empty extension name or value,
      // a quote inside a token; and a size of 2^52 bytes or more, which no real chunk has.
      '5;;a',
      '5;=b',
      '5;a=',
      '5;a=one"two"',
      '12345678901234',
    ]) {
      expectRefused(`${CHUNKED_HEAD}${line}\r\nhello\r\n0\r\n\r\n`, `${JSON.stringify(line)} is not a valid chunk-size line`, [200]);
    }
    // The line after a good chunk is held to the same rules.
    expectRefused(`${CHUNKED_HEAD}2\r\nok\r\n0 \r\n\r\n`, '"0 " is not a valid chunk-size line', [200]);
  });

  it('skips empty lines where a status line is due, as after the 100 Continue aiohttp sends', () => {
    const answer = 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello';
    expectAccepted(`HTTP/1.1 100 Continue\r\n\r\n\r\n${answer}`, 'hello');
    expectAccepted(`\r\n${answer}`, 'hello');
    expectAccepted(`\n\r\r\n\r\n\n${answer}`, 'hello');
    expectAccepted(
      `HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n\n${answer}`,
      'hello',
    );
    expectAccepted(`HTTP/1.1 100 Continue\r\n\r\n\r\n${CHUNKED_HEAD}5\r\nhello\r\n0\r\n\r\n`, 'hello');
  });

  it('refuses a status line after other whitespace, and a connection that closes after empty lines alone', () => {
    expectRefused(' HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', '" HTTP/1.1 200 OK" is not an HTTP/1.x status line', []);
    expectRefused('\r\n\tHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', '"\\tHTTP/1.1 200 OK" is not an HTTP/1.x status line', []);
    expectRefused('HTTP/1.1 100 Continue\r\n\r\n \r\nHTTP/1.1 200 OK\r\n\r\n', '" " is not an HTTP/1.x status line', []);
    expectRefused('HTTP/1.1 100 Continue\r\n\r\n\r\n\r\n', 'the connection closed in the response headers', []);
  });
});
