import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  type ContentRange,
  filenameFromUrl,
  isIdentityEncoding,
  parseAcceptRanges,
  parseContentDisposition,
  parseContentLength,
  parseContentRange,
  parseETag,
  parseRetryAfter,
  sanitizeFilename,
  sanitizeRelativePath,
} from '../../src/engine/http/headers';

/**
 * Runs `task` and returns its result, or throws when it has not returned after `ms`. A vm timeout
 * interrupts even a regular expression that backtracks for minutes, which a test timeout cannot.
 */
function endsWithin<T>(ms: number, task: () => T): T {
  return runInNewContext('task()', { task }, { timeout: ms }) as T;
}

const MAX = Number.MAX_SAFE_INTEGER;

describe('parseContentRange', () => {
  it.each<[string, ContentRange]>([
    ['bytes 0-499/1234', { kind: 'bytes', start: 0, end: 500, total: 1234 }],
    ['bytes 500-1233/1234', { kind: 'bytes', start: 500, end: 1234, total: 1234 }],
    ['bytes 0-0/1', { kind: 'bytes', start: 0, end: 1, total: 1 }],
    ['bytes 0-499/*', { kind: 'bytes', start: 0, end: 500, total: undefined }],
    ['bytes */1234', { kind: 'unsatisfied', total: 1234 }],
    ['bytes */0', { kind: 'unsatisfied', total: 0 }],
    ['BYTES 1-2/3', { kind: 'bytes', start: 1, end: 3, total: 3 }],
    ['Bytes */7', { kind: 'unsatisfied', total: 7 }],
    ['  bytes 0-9/10\t', { kind: 'bytes', start: 0, end: 10, total: 10 }],
    ['bytes 007-008/010', { kind: 'bytes', start: 7, end: 9, total: 10 }],
    [`bytes 0-${MAX - 1}/${MAX}`, { kind: 'bytes', start: 0, end: MAX, total: MAX }],
    [`bytes ${MAX}-${MAX}/*`, { kind: 'bytes', start: MAX, end: MAX + 1, total: undefined }],
  ])('parses %j', (value, expected) => {
    expect(parseContentRange(value)).toEqual(expected);
  });

  it.each([
    null,
    '',
    'bytes',
    'bytes ',
    'items 0-1/2',
    'bytes=0-499/1234',
    'bytes0-499/1234',
    'bytes 0-499',
    'bytes 0-499/',
    'bytes -499/1234',
    'bytes 0-/1234',
    'bytes 500-499/1234',
    'bytes 0-1234/1234',
    'bytes 0-2000/1234',
    'bytes */*',
    'bytes +0-499/1234',
    'bytes 0-+499/1234',
    'bytes 0-499/+1234',
    'bytes -1-499/1234',
    'bytes 0x0-0x1/2',
    'bytes 0.5-1/2',
    'bytes 1e2-200/300',
    'bytes 0 - 499/1234',
    'bytes 0-499 /1234',
    'bytes 0-499/ 1234',
    'bytes 0-499/1234 garbage',
    'bytes 0-499/1234, bytes 500-999/1234',
    'bytes ０-1/2',
    `bytes 0-1/${MAX + 1}`,
    `bytes 0-${MAX + 1}/*`,
    `bytes */${'9'.repeat(30)}`,
  ])('rejects %j', (value) => {
    expect(parseContentRange(value)).toBeUndefined();
  });
});

describe('parseContentLength', () => {
  it.each<[string, number]>([
    ['0', 0],
    ['1234', 1234],
    [' 1234 ', 1234],
    ['00042', 42],
    ['42, 42', 42],
    ['42,42,42', 42],
    ['42, 042', 42],
    [String(MAX), MAX],
  ])('parses %j', (value, expected) => {
    expect(parseContentLength(value)).toBe(expected);
  });

  it.each([
    null,
    '',
    ' ',
    '-1',
    '+5',
    '1.5',
    '1e3',
    '0x10',
    '12 34',
    'abc',
    '42, 43',
    '42,',
    ',42',
    '42,,42',
    String(MAX + 1),
    '9'.repeat(400),
  ])('rejects %j', (value) => {
    expect(parseContentLength(value)).toBeUndefined();
  });
});

describe('parseETag', () => {
  it.each([
    ['"abc"', 'abc', false, '"abc"'],
    ['W/"abc"', 'abc', true, 'W/"abc"'],
    ['""', '', false, '""'],
    ['W/""', '', true, 'W/""'],
    ['  "5f3c-1a2b"  ', '5f3c-1a2b', false, '"5f3c-1a2b"'],
    ['"xyzzy/!#$%&\'()*+,-.:;<=>?@[]^_`{|}~"', "xyzzy/!#$%&'()*+,-.:;<=>?@[]^_`{|}~", false, null],
    ['"caf\xe9"', 'caf\xe9', false, '"caf\xe9"'],
  ])('parses %j', (value, tag, weak, raw) => {
    expect(parseETag(value)).toEqual({ tag, weak, raw: raw ?? value });
  });

  it.each([
    null,
    '',
    'abc',
    'W/abc',
    '"abc',
    'abc"',
    '"a"b"',
    '"a"bc"',
    '"abc" "def"',
    '"abc", "def"',
    'w/"abc"',
    'W/ "abc"',
    'W"abc"',
    '"a b"',
    '"a\tb"',
    '"\u20ac"',
  ])('rejects %j', (value) => {
    expect(parseETag(value)).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2015, 9, 21, 7, 28, 0); // Wed, 21 Oct 2015 07:28:00 GMT

  it.each<[string, number]>([
    ['0', 0],
    ['120', 120_000],
    [' 5 ', 5000],
    ['007', 7000],
    ['Wed, 21 Oct 2015 07:28:00 GMT', 0],
    ['Wed, 21 Oct 2015 07:28:30 GMT', 30_000],
    ['Thu, 22 Oct 2015 07:28:00 GMT', 86_400_000],
    ['thu, 22 oct 2015 07:28:00 gmt', 86_400_000],
    ['Tue, 20 Oct 2015 07:28:00 GMT', 0],
    ['Sun, 06 Nov 1994 08:49:37 GMT', 0],
    ['Wednesday, 21-Oct-15 07:29:00 GMT', 60_000],
    ['Sunday, 06-Nov-94 08:49:37 GMT', 0],
    ['Wed Oct 21 07:28:10 2015', 10_000],
    ['Wed Oct  1 07:28:00 2025', Date.UTC(2025, 9, 1, 7, 28) - now],
    ['Sun Nov  6 08:49:37 1994', 0],
    ['Wed, 31 Dec 2025 23:59:60 GMT', Date.UTC(2025, 11, 31, 23, 59, 59) - now],
  ])('parses %j', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });

  it('reads a two-digit RFC 850 year more than 50 years ahead as the previous century', () => {
    // now is 2015: 65 → 2065 (exactly 50 years ahead), 66 → 1966 (in the past).
    expect(parseRetryAfter('Thursday, 01-Jan-65 00:00:00 GMT', now)).toBe(Date.UTC(2065, 0, 1) - now);
    expect(parseRetryAfter('Saturday, 01-Jan-66 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Thursday, 01-Jan-70 00:00:00 GMT', now)).toBe(0);
  });

  it.each([
    null,
    '',
    'soon',
    '-1',
    '+5',
    '1.5',
    '1e3',
    '5 seconds',
    String(Math.floor(MAX / 1000) + 1),
    '2015-10-22T07:28:00Z',
    'Thu, 22 Oct 2015 07:28:00',
    'Thu, 22 Oct 2015 07:28:00 UTC',
    'Thu, 22 Oct 2015 07:28:00 +0000',
    'Thu, 22 Foo 2015 07:28:00 GMT',
    'Thu, 30 Feb 2015 07:28:00 GMT',
    'Thu, 00 Oct 2015 07:28:00 GMT',
    'Thu, 22 Oct 2015 24:00:00 GMT',
    'Thu, 22 Oct 2015 07:60:00 GMT',
    'Thu, 22 Oct 2015 07:28:61 GMT',
    'Thu, 2 Oct 2015 07:28:00 GMT',
    'Xyz, 22 Oct 2015 07:28:00 GMT',
    'Thu,  22 Oct 2015 07:28:00 GMT',
    'Thursday, 22-Oct-2015 07:28:00 GMT',
    'Thu Oct 22 07:28:00 2015 GMT',
    'Thu Oct 2 07:28:00 2015',
    'Fri 1',
  ])('rejects %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe('parseContentDisposition', () => {
  it.each<[string, string]>([
    ['attachment; filename="report.pdf"', 'report.pdf'],
    ['attachment; filename=report.pdf', 'report.pdf'],
    ['inline; filename="a.txt"', 'a.txt'],
    ['filename="no-type.txt"', 'no-type.txt'],
    ['filename=bare.txt', 'bare.txt'],
    ['ATTACHMENT; FILENAME="upper.txt"', 'upper.txt'],
    ['attachment; FileName=mixed.txt', 'mixed.txt'],
    ['attachment;filename="tight.txt"', 'tight.txt'],
    ['attachment ; filename = "spaced.txt" ', 'spaced.txt'],
    ['attachment; filename="a;b.txt"', 'a;b.txt'],
    ['attachment; filename="a;b.txt"; size=3', 'a;b.txt'],
    ['attachment; filename="quote\\"d.txt"', 'quote"d.txt'],
    ['attachment; filename="back\\\\slash.txt"', 'back\\slash.txt'],
    ['attachment; filename="\\a\\b.txt"', 'ab.txt'],
    ['attachment; filename="with space.txt"', 'with space.txt'],
    ['attachment; filename=unquoted space.txt', 'unquoted space.txt'],
    ['attachment; filename="unterminated.txt', 'unterminated.txt'],
    ['attachment; filename="first.txt"; filename="second.txt"', 'first.txt'],
    ['attachment; size=10; filename="later.txt"; creation-date="x; y"', 'later.txt'],
    ['attachment; foo="filename=trap.txt"; filename=real.txt', 'real.txt'],
    ['attachment; filename="caf\xc3\xa9.txt"', 'café.txt'], // raw UTF-8 bytes seen as Latin-1
    ['attachment; filename="caf\xe9.txt"', 'café.txt'], // genuine Latin-1
    ['attachment; filename="../../etc/passwd"', '../../etc/passwd'], // not sanitized here
    // filename* (RFC 8187)
    ["attachment; filename*=UTF-8''%e2%82%ac%20rates.txt", '€ rates.txt'],
    ["attachment; filename*=utf-8''%E2%82%AC%20rates.txt", '€ rates.txt'],
    ["attachment; filename*=UTF-8'en'%e2%82%ac.txt", '€.txt'],
    ["attachment; filename*=UTF-8'en-US'plain.txt", 'plain.txt'],
    ["attachment; filename*=ISO-8859-1''%A3%20rates.txt", '£ rates.txt'],
    ["attachment; filename*=iso-8859-1'de'%E4rger.txt", 'ärger.txt'],
    ['attachment; filename*="UTF-8\'\'quoted%20ext.txt"', 'quoted ext.txt'],
    ["attachment; FILENAME*=UTF-8''upper%2Etxt", 'upper.txt'],
    // filename* wins regardless of order
    ['attachment; filename="EURO.txt"; filename*=utf-8\'\'%e2%82%ac%20rates.txt', '€ rates.txt'],
    ['attachment; filename*=utf-8\'\'%e2%82%ac%20rates.txt; filename="EURO.txt"', '€ rates.txt'],
    // invalid filename* falls back to filename
    ['attachment; filename*=UTF-8\'\'%e2%82.txt; filename="fallback.txt"', 'fallback.txt'],
    ["attachment; filename*=UTF-8''%zz.txt; filename=fallback.txt", 'fallback.txt'],
    ["attachment; filename*=UTF-8''%e.txt; filename=fallback.txt", 'fallback.txt'],
    ["attachment; filename*=KOI8-R''%c1.txt; filename=fallback.txt", 'fallback.txt'],
    ['attachment; filename*=no-quotes.txt; filename=fallback.txt', 'fallback.txt'],
    ["attachment; filename*=UTF-8''; filename=fallback.txt", 'fallback.txt'],
    ["attachment; filename*=UTF-8''%ff.txt; filename=fallback.txt", 'fallback.txt'],
  ])('parses %j', (value, expected) => {
    expect(parseContentDisposition(value)).toBe(expected);
  });

  it.each([
    null,
    '',
    'attachment',
    'inline',
    'attachment; filename=',
    'attachment; filename=""',
    'attachment; filename',
    'attachment; name="field"',
    "attachment; filename*=UTF-8''%e2%82.txt",
    'attachment; filename*=garbage',
    ';;;',
    '=',
  ])('finds no filename in %j', (value) => {
    expect(parseContentDisposition(value)).toBeUndefined();
  });
});

describe('filenameFromUrl', () => {
  it.each<[string, string | undefined]>([
    ['https://example.com/files/archive.tar.gz', 'archive.tar.gz'],
    ['https://example.com/files/archive.zip?token=abc#frag', 'archive.zip'],
    ['https://example.com/files/dir/', 'dir'],
    ['https://example.com/a//b//', 'b'],
    ['https://example.com/%E2%82%AC%20rates.txt', '€ rates.txt'],
    ['https://example.com/bad%zzescape.txt', 'bad%zzescape.txt'],
    ['https://example.com/half%E2%82.txt', 'half%E2%82.txt'],
    ['https://example.com/a%2Fb.txt', 'a/b.txt'],
    ['https://example.com/file?name=x.txt', 'file'],
    ['ftp://host/pub/file.iso', 'file.iso'],
    ['file:///home/me/doc.pdf', 'doc.pdf'],
    ['https://example.com/', undefined],
    ['https://example.com', undefined],
    ['https://example.com/?q=file.txt', undefined],
    ['https://example.com//', undefined],
    ['data:text/plain,hello', undefined],
    ['blob:https://example.com/0b5e5c9c-1111-2222-3333-444444444444', undefined],
    ['not a url', undefined],
    ['/relative/path.txt', undefined],
    ['', undefined],
  ])('%j → %j', (url, expected) => {
    expect(filenameFromUrl(url)).toBe(expected);
  });
});

describe('sanitizeFilename', () => {
  it.each<[string, string]>([
    ['report.pdf', 'report.pdf'],
    ['with space.txt', 'with space.txt'],
    ['€ rates.txt', '€ rates.txt'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Windows\\system32\\evil.dll', 'evil.dll'],
    ['dir/sub\\mixed.txt', 'mixed.txt'],
    ['a<b>c:d"e|f?g*h.txt', 'abcdefgh.txt'],
    ['tab\there\nnew\x00null\x7f\x9f.txt', 'tabherenewnull.txt'],
    ['  padded.txt  ', 'padded.txt'],
    ['...dots...', 'dots'],
    ['.bashrc', 'bashrc'],
    ['name. . .', 'name'],
    ['CON', '_CON'],
    ['con.txt', '_con.txt'],
    ['Nul.tar.gz', '_Nul.tar.gz'],
    ['aux', '_aux'],
    ['PRN.', '_PRN'],
    ['COM1', '_COM1'],
    ['lpt9.log', '_lpt9.log'],
    ['COM0', 'COM0'],
    ['LPT10', 'LPT10'],
    ['CONSOLE.txt', 'CONSOLE.txt'],
    ['icon.png', 'icon.png'],
    ['bad\ud800surrogate.txt', 'badsurrogate.txt'],
    ['emoji 😀.txt', 'emoji 😀.txt'],
    ['photo\u202egpj.exe', 'photogpj.exe'],
    ['\u2067name\u2069\u200e.txt', 'name.txt'],
  ])('%j → %j', (name, expected) => {
    expect(sanitizeFilename(name)).toBe(expected);
  });

  it('ends at once on hostile names of 200,000 characters, keeping their ends', () => {
    const dots = '.'.repeat(200_000);
    const spaces = ' '.repeat(200_000);
    expect(endsWithin(2000, () => sanitizeFilename(`a${dots}b`))).toBe('a.b');
    expect(endsWithin(2000, () => sanitizeFilename(`a${spaces}.iso`))).toBe('a.iso');
    expect(endsWithin(2000, () => sanitizeFilename(`${dots}x`))).toBe('x');
    const header = `attachment; filename="a${dots}b.bin"`;
    expect(endsWithin(2000, () => parseContentDisposition(header))).toBeUndefined();
  });

  it.each(['', '.', '..', '...', '   ', 'a/', 'a/..', '<>:"|?*', '\x00\x01', 'x\\.'])('falls back for %j', (name) => {
    expect(sanitizeFilename(name)).toBe('download');
    expect(sanitizeFilename(name, 'file.bin')).toBe('file.bin');
  });

  const utf8 = (s: string) => new TextEncoder().encode(s).length;

  it('truncates to 200 UTF-8 bytes keeping the extension', () => {
    const out = sanitizeFilename(`${'a'.repeat(300)}.txt`);
    expect(out).toBe(`${'a'.repeat(196)}.txt`);
    expect(utf8(out)).toBe(200);
  });

  it('never splits a multi-byte character', () => {
    const out = sanitizeFilename(`${'€'.repeat(100)}.txt`); // 3 bytes each
    expect(out).toBe(`${'€'.repeat(65)}.txt`);
    expect(utf8(out)).toBeLessThanOrEqual(200);
    const emoji = sanitizeFilename('😀'.repeat(60));
    expect(emoji).toBe('😀'.repeat(50));
    expect(sanitizeFilename(`x${'😀'.repeat(60)}.bin`)).toBe(`x${'😀'.repeat(48)}.bin`);
  });

  it('leaves names at the limit alone', () => {
    const name = `${'b'.repeat(196)}.iso`;
    expect(sanitizeFilename(name)).toBe(name);
  });

  it('drops an absurdly long extension instead of keeping it', () => {
    const out = sanitizeFilename(`name.${'e'.repeat(300)}`);
    expect(utf8(out)).toBe(200);
    expect(out.startsWith('name.eee')).toBe(true);
  });

  it('trims dots and spaces exposed by truncation', () => {
    const out = sanitizeFilename(`${'a'.repeat(195)}. ${'b'.repeat(50)}.txt`);
    expect(out).toBe(`${'a'.repeat(195)}.txt`);
  });

  it('is idempotent', () => {
    for (const name of ['../x/CON.txt', ` ${'€'.repeat(100)}.txt `, 'a<b>.txt', '...']) {
      const once = sanitizeFilename(name);
      expect(sanitizeFilename(once)).toBe(once);
    }
  });
});

describe('sanitizeRelativePath', () => {
  it.each<[string, string]>([
    ['.ssh/authorized_keys', 'ssh/authorized_keys'],
    ['.profile', 'profile'],
    ['CON', '_CON'],
    ['sub/trail. ', 'sub/trail'],
    ['dir/nul.txt/.git/config', 'dir/_nul.txt/git/config'],
    ['a/.../b', 'a/_/b'],
    ['over/\u202eexe.txt', 'over/exe.txt'],
    ['plain/path/file.iso', 'plain/path/file.iso'],
  ])('%j → %j', (path, expected) => {
    expect(sanitizeRelativePath(path)).toBe(expected);
  });

  it('keeps every segment within 200 UTF-8 bytes', () => {
    const out = sanitizeRelativePath(`${'d'.repeat(300)}/${'é'.repeat(300)}.bin`);
    const [dir, file] = out.split('/');
    expect(new TextEncoder().encode(dir).length).toBe(200);
    expect(new TextEncoder().encode(file).length).toBeLessThanOrEqual(200);
    expect(file!.endsWith('.bin')).toBe(true);
  });
});

describe('isIdentityEncoding', () => {
  it.each<[string | null, boolean]>([
    [null, true],
    ['', true],
    ['  ', true],
    ['identity', true],
    ['IDENTITY', true],
    [' Identity ', true],
    ['identity, identity', true],
    ['identity,,', true],
    ['gzip', false],
    ['br', false],
    ['deflate', false],
    ['identity, gzip', false],
    ['gzip, identity', false],
    ['x-gzip', false],
    ['identityx', false],
    ['identity;q=1', false],
  ])('%j → %j', (value, expected) => {
    expect(isIdentityEncoding(value)).toBe(expected);
  });
});

describe('parseAcceptRanges', () => {
  it.each<[string | null, 'bytes' | 'none' | undefined]>([
    ['bytes', 'bytes'],
    ['Bytes', 'bytes'],
    [' BYTES ', 'bytes'],
    ['bytes, items', 'bytes'],
    ['items, bytes', 'bytes'],
    ['none, bytes', 'bytes'],
    ['none', 'none'],
    ['NONE', 'none'],
    [' none ,', 'none'],
    [null, undefined],
    ['', undefined],
    ['items', undefined],
    ['none, items', undefined],
    ['bytesx', undefined],
    ['byte', undefined],
    ['bytes=0-', undefined],
  ])('%j → %j', (value, expected) => {
    expect(parseAcceptRanges(value)).toBe(expected);
  });
});
