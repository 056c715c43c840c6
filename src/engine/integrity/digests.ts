/**
 * Digests announced by servers and Metalink files, normalized so sources can be compared and a
 * finished file verified. Pure and platform-free. Malformed input yields `undefined` (or is left
 * out of a list), never an exception.
 *
 * Which header describes what:
 * - `Repr-Digest` (RFC 9530) describes the whole selected representation, on a 200 and on a 206
 *   alike, so it can verify the assembled file.
 * - `Digest` (RFC 3230) is an instance digest: also the whole representation.
 * - `Content-Digest` (RFC 9530) covers only the content of *this* message: on a 206 that is just
 *   the part sent, so it can check that part but never the whole file. Both use the same syntax,
 *   so `parseReprDigest` parses either; the caller decides what the result describes.
 */

export type DigestAlgorithm = 'sha-256' | 'sha-512' | 'sha-1' | 'md5';
export type Digest = { algorithm: DigestAlgorithm; value: Uint8Array };

export const DIGEST_LENGTH: Readonly<Record<DigestAlgorithm, number>> = {
  'sha-512': 64,
  'sha-256': 32,
  'sha-1': 20,
  md5: 16,
};

/** Strongest first. */
export const DIGEST_STRENGTH: readonly DigestAlgorithm[] = ['sha-512', 'sha-256', 'sha-1', 'md5'];

// RFC 9530 and RFC 3230 registries ("sha" is SHA-1 in both), RFC 5843, and the IANA hash textual
// names Metalink uses; plus the unhyphenated spellings common in the wild.
const ALIASES: Record<string, DigestAlgorithm> = {
  'sha-512': 'sha-512',
  sha512: 'sha-512',
  'sha-256': 'sha-256',
  sha256: 'sha-256',
  'sha-1': 'sha-1',
  sha1: 'sha-1',
  sha: 'sha-1',
  md5: 'md5',
};

export function normalizeDigestAlgorithm(name: string): DigestAlgorithm | undefined {
  const key = name.trim().toLowerCase();
  return Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
}

function makeDigest(name: string, value: Uint8Array | undefined): Digest | undefined {
  const algorithm = normalizeDigestAlgorithm(name);
  if (algorithm === undefined || value === undefined) return undefined;
  return value.length === DIGEST_LENGTH[algorithm] ? { algorithm, value } : undefined;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX = new Map([...B64].map((c, i) => [c, i]));

/**
 * Strict standard base64 (no whitespace, no base64url), written out because `atob` silently skips
 * whitespace. Padding may be missing and pad bits non-zero, as RFC 8941 §4.2.7 asks to allow.
 */
export function decodeBase64(s: string): Uint8Array | undefined {
  const body = s.replace(/={1,2}$/, '');
  if (body.length !== s.length && s.length % 4 !== 0) return undefined;
  if (body.length % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((body.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (const c of body) {
    const v = B64_INDEX.get(c);
    if (v === undefined) return undefined;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  return out;
}

/** Exactly `hex` digits, any case, surrounding whitespace allowed (Metalink text content). */
export function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | undefined {
  const h = hex.trim();
  if (h.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(h)) return undefined;
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** A digest given as hex, e.g. Metalink `<hash type="sha-256">…</hash>`. */
export function digestFromHex(algorithm: string, hex: string): Digest | undefined {
  return makeDigest(algorithm, hexToBytes(hex));
}

// --- RFC 8941 Structured Field Dictionary, just enough to read byte-sequence members -------------

const SF_KEY = /[a-z*][a-z0-9_\-.*]*/y;
const SF_NUMBER = /-?(?:\d{1,12}\.\d{1,3}|\d{1,15})(?![\d.])/y;
const SF_STRING = /"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"/y;
const SF_TOKEN = /[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/y;
const SF_BYTES = /:([A-Za-z0-9+/=]*):/y;
const SF_BOOLEAN = /\?[01]/y;
const SF_DATE = /@-?\d{1,15}(?![\d.])/y; // RFC 9651
const SF_DISPLAY = /%"(?:[\x20\x21\x23\x24\x26-\x7e]|%[0-9a-f]{2})*"/y; // RFC 9651

class SfReader {
  i = 0;
  constructor(readonly s: string) {}
  match(re: RegExp): RegExpExecArray | undefined {
    re.lastIndex = this.i;
    const m = re.exec(this.s);
    if (m) this.i = re.lastIndex;
    return m ?? undefined;
  }
  skip(chars: string): void {
    while (this.i < this.s.length && chars.includes(this.s[this.i]!)) this.i++;
  }
  peek(): string | undefined {
    return this.s[this.i];
  }
}

/** A bare item: its bytes when it is a byte sequence, `null` for any other valid item. */
function sfBareItem(r: SfReader): Uint8Array | null | undefined {
  const bytes = r.match(SF_BYTES);
  if (bytes) return decodeBase64(bytes[1]!) ?? undefined;
  for (const re of [SF_NUMBER, SF_STRING, SF_TOKEN, SF_BOOLEAN, SF_DATE, SF_DISPLAY]) {
    if (r.match(re)) return null;
  }
  return undefined;
}

/** Parameters are syntax to get past; no digest parameter means anything to us. */
function sfSkipParams(r: SfReader): boolean {
  while (r.peek() === ';') {
    r.i++;
    r.skip(' ');
    if (!r.match(SF_KEY)) return false;
    if (r.peek() === '=') {
      r.i++;
      if (sfBareItem(r) === undefined) return false;
    }
  }
  return true;
}

/** Member value: bytes for a byte-sequence item, `null` for any other valid member. */
function sfMemberValue(r: SfReader): Uint8Array | null | undefined {
  if (r.peek() !== '=') return sfSkipParams(r) ? null : undefined; // boolean true
  r.i++;
  if (r.peek() === '(') {
    r.i++;
    for (;;) {
      r.skip(' ');
      if (r.peek() === ')') {
        r.i++;
        return sfSkipParams(r) ? null : undefined;
      }
      if (sfBareItem(r) === undefined || !sfSkipParams(r)) return undefined;
      if (r.peek() !== ' ' && r.peek() !== ')') return undefined;
    }
  }
  const item = sfBareItem(r);
  return item === undefined || !sfSkipParams(r) ? undefined : item;
}

/**
 * RFC 9530 `Repr-Digest` or `Content-Digest`. Unknown algorithms, non-byte-sequence values and
 * wrong lengths are left out; a syntax error anywhere fails the whole field, as RFC 8941 requires.
 * Duplicate keys: the last wins.
 */
export function parseReprDigest(value: string | null): Digest[] | undefined {
  if (value === null) return undefined;
  const r = new SfReader(value);
  const members = new Map<string, Uint8Array | null>();
  r.skip(' ');
  while (r.i < value.length) {
    const key = r.match(SF_KEY);
    if (!key) return undefined;
    const v = sfMemberValue(r);
    if (v === undefined) return undefined;
    members.set(key[0], v);
    r.skip(' \t');
    if (r.i === value.length) break;
    if (r.peek() !== ',') return undefined;
    r.i++;
    r.skip(' \t');
    if (r.i === value.length) return undefined; // trailing comma
  }
  const out: Digest[] = [];
  for (const [key, bytes] of members) {
    const d = bytes === null ? undefined : makeDigest(key, bytes);
    if (d) out.push(d);
  }
  return out;
}

/**
 * RFC 3230 `Digest` (`SHA-256=base64, MD5=base64`), algorithm names case-insensitive. Legacy and
 * loosely implemented, so members are judged one by one: bad ones are left out.
 */
export function parseLegacyDigest(value: string | null): Digest[] | undefined {
  if (value === null) return undefined;
  const out: Digest[] = [];
  for (const member of value.split(',')) {
    // Some servers quote the value; base64 never contains a quote, so dropping them is safe.
    const m = /^\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*=\s*"?([^\s"]+)"?\s*$/.exec(member);
    const d = m ? makeDigest(m[1]!, decodeBase64(m[2]!)) : undefined;
    if (d) out.push(d);
  }
  return out;
}

// --- Comparing -----------------------------------------------------------------------------------

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function sameDigest(a: Digest, b: Digest): boolean {
  return a.algorithm === b.algorithm && equalBytes(a.value, b.value);
}
