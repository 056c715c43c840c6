/**
 * Parsers for the response headers a resumable download depends on. Pure and platform-free so the
 * extension and the CLI share them. Malformed input yields `undefined`, never an exception: a bad
 * header must degrade to "unknown", not abort a download.
 */

/** A parsed Content-Range. `end` is exclusive, unlike the header's inclusive last-pos. */
export type ContentRange =
  { kind: 'bytes'; start: number; end: number; total: number | undefined } | { kind: 'unsatisfied'; total: number };

/** A parsed ETag; `raw` is what to send back verbatim in If-Range / If-Match. */
export type EntityTag = { tag: string; weak: boolean; raw: string };

/** Non-negative decimal integer, or undefined when not all digits or not exactly representable. */
function parseDigits(s: string): number | undefined {
  if (!/^\d+$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Splits a comma list, dropping empty members (RFC 9110 §5.6.1 requires tolerating them). */
function listMembers(value: string): string[] {
  return value
    .split(',')
    .map((m) => m.trim().toLowerCase())
    .filter((m) => m !== '');
}

export function parseContentRange(value: string | null): ContentRange | undefined {
  const m = /^bytes +(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i.exec(value?.trim() ?? '');
  if (!m) return undefined;
  const total = m[3] === '*' ? undefined : parseDigits(m[3]!);
  if (m[3] !== '*' && total === undefined) return undefined;
  if (m[1] === undefined) return total === undefined ? undefined : { kind: 'unsatisfied', total };
  const start = parseDigits(m[1]);
  const last = parseDigits(m[2]!);
  if (start === undefined || last === undefined || last < start) return undefined;
  if (total !== undefined && last >= total) return undefined;
  return { kind: 'bytes', start, end: last + 1, total };
}

export function parseContentLength(value: string | null): number | undefined {
  if (value === null) return undefined;
  // Proxies sometimes fold duplicated headers into a list; identical values are still unambiguous.
  const values = value.split(',').map((v) => parseDigits(v.trim()));
  const first = values[0];
  return first !== undefined && values.every((v) => v === first) ? first : undefined;
}

export function parseETag(value: string | null): EntityTag | undefined {
  const raw = value?.trim() ?? '';
  // etagc: any visible char except DQUOTE, plus obs-text (fetch exposes bytes as Latin-1 chars).
  const m = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/.exec(raw);
  return m ? { tag: m[2]!, weak: m[1] !== undefined, raw } : undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const IMF_FIXDATE = /^(?:mon|tue|wed|thu|fri|sat|sun), (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const RFC850_DATE = /^(?:mon|tues|wednes|thurs|fri|satur|sun)day, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const ASCTIME_DATE = /^(?:mon|tue|wed|thu|fri|sat|sun) ([a-z]{3}) ( \d|\d{2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

function utcTime(year: number, month: string, day: number, h: number, mi: number, s: number) {
  const m = MONTHS.indexOf(month.toLowerCase());
  if (m < 0 || h > 23 || mi > 59 || s > 60) return undefined;
  const t = Date.UTC(year, m, day, h, mi, Math.min(s, 59)); // leap second: clamp, don't roll over
  return new Date(t).getUTCDate() === day ? t : undefined; // rejects Feb 30 and day 0
}

/**
 * The three HTTP-date forms of RFC 9110 §5.6.7, parsed by hand rather than with Date.parse, which
 * reads asctime (zone-less) as local time and accepts arbitrary garbage in some engines.
 */
function parseHttpDate(value: string, now: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m) return utcTime(+m[3]!, m[2]!, +m[1]!, +m[4]!, +m[5]!, +m[6]!);
  m = RFC850_DATE.exec(value);
  if (m) {
    // Two-digit year: one more than 50 years ahead means the previous century (§5.6.7).
    let year = 2000 + +m[3]!;
    if (year > new Date(now).getUTCFullYear() + 50) year -= 100;
    return utcTime(year, m[2]!, +m[1]!, +m[4]!, +m[5]!, +m[6]!);
  }
  m = ASCTIME_DATE.exec(value);
  if (m) return utcTime(+m[6]!, m[1]!, +m[2]!.trim(), +m[3]!, +m[4]!, +m[5]!);
  return undefined;
}

export function parseRetryAfter(value: string | null, now: number): number | undefined {
  const v = value?.trim() ?? '';
  const seconds = parseDigits(v);
  if (seconds !== undefined) {
    return Number.isSafeInteger(seconds * 1000) ? seconds * 1000 : undefined;
  }
  const at = parseHttpDate(v, now);
  return at === undefined ? undefined : Math.max(0, at - now);
}

/** Content-Disposition parameters by lower-cased name; the first occurrence wins. */
function dispositionParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  let i = 0;
  while (i < value.length) {
    let j = i;
    while (j < value.length && value[j] !== '=' && value[j] !== ';') j++;
    const name = value.slice(i, j).trim().toLowerCase();
    if (value[j] !== '=') {
      i = j + 1; // a bare token, i.e. the disposition type
      continue;
    }
    j++;
    while (value[j] === ' ' || value[j] === '\t') j++;
    let param = '';
    if (value[j] === '"') {
      // Quoted-string: semicolons inside are data; an unterminated one runs to the end.
      for (j++; j < value.length && value[j] !== '"'; j++) {
        if (value[j] === '\\' && j + 1 < value.length) j++;
        param += value.charAt(j);
      }
      j = value.indexOf(';', j);
    } else {
      const end = value.indexOf(';', j);
      param = value.slice(j, end < 0 ? undefined : end).trim();
      j = end;
    }
    if (name !== '' && !params.has(name)) params.set(name, param);
    if (j < 0) break;
    i = j + 1;
  }
  return params;
}

const fatalUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
};

const latin1Bytes = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** RFC 8187 ext-value (`charset'lang'pct-encoded`) → text; undefined when not decodable. */
function decodeExtValue(value: string): string | undefined {
  const m = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(value);
  if (!m) return undefined;
  const charset = m[1]!.toLowerCase();
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') return undefined;
  let bytes = ''; // one char per byte, i.e. Latin-1 decoded
  for (let i = 0; i < m[2]!.length; i++) {
    const c = m[2]!.charAt(i);
    if (c === '%') {
      const hex = m[2]!.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/i.test(hex)) return undefined;
      bytes += String.fromCharCode(parseInt(hex, 16));
      i += 2;
    } else if (c.charCodeAt(0) > 0xff) {
      return undefined;
    } else {
      bytes += c;
    }
  }
  return charset === 'iso-8859-1' ? bytes : fatalUtf8(latin1Bytes(bytes));
}

/**
 * Longer Content-Disposition values are refused unread: no real file name needs more, and the
 * parsing stays cheap whatever a server sends.
 */
const MAX_DISPOSITION_CHARS = 8192;

export function parseContentDisposition(value: string | null): string | undefined {
  if (value === null || value.length > MAX_DISPOSITION_CHARS) return undefined;
  const params = dispositionParams(value);
  const ext = params.get('filename*');
  const extName = ext === undefined ? undefined : decodeExtValue(ext);
  if (extName) return extName;
  const name = params.get('filename');
  if (!name) return undefined;
  // Many servers send raw UTF-8 in `filename`, which fetch exposes as Latin-1 chars; like
  // browsers, use the UTF-8 reading when it is valid.
  // eslint-disable-next-line no-control-regex -- the Latin-1 range, control characters included
  if (/[\x80-\xff]/.test(name) && !/[^\x00-\xff]/.test(name)) {
    return fatalUtf8(latin1Bytes(name)) ?? name;
  }
  return name;
}

export function filenameFromUrl(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  // Opaque paths (data:, blob:, mailto:) are not file paths.
  if (!path.startsWith('/')) return undefined;
  const segment = path
    .split('/')
    .filter((s) => s !== '')
    .pop();
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const MAX_FILENAME_BYTES = 200;
const MAX_EXTENSION_BYTES = 32;
/**
 * What of a name is looked at: its start (a kept name has at most 200 bytes, so 200 characters)
 * and its end (the extension). Cutting first keeps every step below linear in a bounded length.
 */
const HEAD_CHARS = 256;
const TAIL_CHARS = 64;
/** A relative path (a Metalink name) has at most this many segments. */
export const MAX_PATH_DEPTH = 16;

const charBytes = (ch: string) => {
  const c = ch.codePointAt(0)!;
  return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
};

function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) n += charBytes(ch);
  return n;
}

/** The longest prefix of `s` of whole code points that fits in `max` UTF-8 bytes. */
function truncateUtf8(s: string, max: number): string {
  let bytes = 0;
  let out = '';
  for (const ch of s) {
    bytes += charBytes(ch);
    if (bytes > max) break;
    out += ch;
  }
  return out;
}

const isDotOrSpace = (ch: string) => ch === '.' || /\s/.test(ch);

/** `s` without leading (when `leading`) and trailing dots and white space; a loop, not a backtracking pattern. */
function trimDotsAndSpaces(s: string, leading: boolean): string {
  let start = 0;
  let end = s.length;
  if (leading) while (start < end && isDotOrSpace(s.charAt(start))) start++;
  while (end > start && isDotOrSpace(s.charAt(end - 1))) end--;
  return s.slice(start, end);
}

/**
 * One path segment safe on every OS: no separators, control, bidi-override or reserved
 * characters, no leading dots (hidden files), no trailing dots or spaces (Windows drops them),
 * no device names, at most 200 UTF-8 bytes (the extension kept); `fallback` when nothing is left.
 */
export function sanitizeFilename(name: string, fallback = 'download'): string {
  let s = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  if (s.length > HEAD_CHARS + TAIL_CHARS) s = s.slice(0, HEAD_CHARS) + s.slice(-TAIL_CHARS);
  s = s
    // Bidi controls make "gpj.exe" look like "exe.jpg".
    // eslint-disable-next-line no-control-regex -- control characters are what this removes
    .replace(/[\x00-\x1f\x7f-\x9f<>:"|?*\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
    // Lone surrogates cannot be encoded in a file name on any OS.
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '');
  s = trimDotsAndSpaces(s, true);
  if (s === '') return fallback;
  if (utf8Length(s) > MAX_FILENAME_BYTES) {
    const dot = s.lastIndexOf('.');
    const ext = dot > 0 ? s.slice(dot) : '';
    const keepExt = ext !== '' && utf8Length(ext) <= MAX_EXTENSION_BYTES;
    const base = keepExt ? s.slice(0, dot) : s;
    const room = MAX_FILENAME_BYTES - (keepExt ? utf8Length(ext) : 0);
    s = trimDotsAndSpaces(truncateUtf8(base, room), false) + (keepExt ? ext : '');
  }
  // Windows reserves these device names even with an extension (NUL.txt is still NUL).
  if (/^(?:con|prn|aux|nul|com[1-9]|lpt[1-9])(?:\..*)?$/i.test(s)) s = `_${s}`;
  return s;
}

/**
 * A relative path (`dir/sub/name`) whose every segment went through `sanitizeFilename`. The
 * caller has refused absolute paths, `..`, empty segments and more than MAX_PATH_DEPTH of them.
 */
export function sanitizeRelativePath(path: string): string {
  return path
    .split('/')
    .map((segment) => sanitizeFilename(segment, '_'))
    .join('/');
}

export function isIdentityEncoding(value: string | null): boolean {
  return value === null || listMembers(value).every((m) => m === 'identity');
}

export function parseAcceptRanges(value: string | null): 'bytes' | 'none' | undefined {
  if (value === null) return undefined;
  const members = listMembers(value);
  if (members.includes('bytes')) return 'bytes';
  return members.length === 1 && members[0] === 'none' ? 'none' : undefined;
}
