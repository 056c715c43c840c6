/**
 * Metalink 4 (RFC 5854) parsing without DOMParser, which MV3 service workers lack. The small XML
 * reader below handles what Metalink documents use (elements, attributes, text, the predefined and
 * numeric entities, comments, CDATA, processing instructions, namespaces) and refuses DOCTYPE
 * internal subsets, so entity-expansion attacks cannot happen. Errors come back as values.
 */
import {
  DIGEST_LENGTH,
  DIGEST_STRENGTH,
  type Digest,
  type DigestAlgorithm,
  digestFromHex,
  hexToBytes,
  normalizeDigestAlgorithm,
  sameDigest,
} from '../integrity/digests';
import { MAX_PATH_DEPTH, sanitizeRelativePath } from '../http/headers';
import { parseHttpUrl } from '../http/http-url';

export const METALINK_NS = 'urn:ietf:params:xml:ns:metalink';

export interface MetalinkUrl {
  url: string;
  /** 1..999999, lower first. */
  priority?: number;
  /** ISO 3166-1 alpha-2 country of the mirror, lower case: mirrors in the user's country come first. */
  location?: string;
}

export interface MetalinkPieces {
  algorithm: DigestAlgorithm;
  /** Bytes per piece; the last piece may be shorter. */
  length: number;
  hashes: Uint8Array[];
}

export interface MetalinkFile {
  /**
   * Relative path, checked by `isSafeMetalinkName`, every segment sanitized like a server's file
   * name (no hidden files, device names, bidi controls…); may contain `/` subdirectories.
   */
  name: string;
  size?: number;
  hashes: Digest[];
  /** The strongest usable piece-hash list. */
  pieces?: MetalinkPieces;
  /** http(s) only (the only schemes Stitch can fetch), by priority, unprioritized last. */
  urls: MetalinkUrl[];
}

export type MetalinkResult = { files: MetalinkFile[] } | { error: string };

// --- XML -----------------------------------------------------------------------------------------

interface XmlElement {
  ns: string;
  local: string;
  /** Attributes by qualified name; Metalink's own are unprefixed. */
  attrs: Map<string, string>;
  children: XmlElement[];
  /** Direct text and CDATA content, concatenated. */
  text: string;
}

class XmlError extends Error {}

const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const NAME = /[A-Za-z_\u00C0-\uFFFF][\w.\-:\u00B7\u00C0-\uFFFF]*/y;
const MAX_DEPTH = 64;
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

const isXmlChar = (c: number) =>
  c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);

/** Only the five predefined entities and character references exist: no DTD is honoured. */
function decodeEntities(s: string): string {
  let out = '';
  let from = 0;
  for (let amp = s.indexOf('&'); amp >= 0; amp = s.indexOf('&', from)) {
    const semi = s.indexOf(';', amp);
    const ref = semi < 0 ? '' : s.slice(amp + 1, semi);
    let ch: string | undefined;
    const m = /^#(?:x([0-9a-fA-F]{1,6})|(\d{1,7}))$/.exec(ref);
    if (m) {
      const cp = m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
      if (isXmlChar(cp)) ch = String.fromCodePoint(cp);
    } else if (Object.hasOwn(PREDEFINED, ref)) {
      ch = PREDEFINED[ref];
    }
    if (ch === undefined) {
      throw new XmlError(`undefined or malformed entity reference "&${ref.slice(0, 20)};"`);
    }
    out += s.slice(from, amp) + ch;
    from = semi + 1;
  }
  return out + s.slice(from);
}

function resolveName(qname: string, scope: Map<string, string>): { ns: string; local: string } {
  const parts = qname.split(':');
  if (parts.length === 1) return { ns: scope.get('') ?? '', local: qname };
  const [prefix, local] = parts;
  if (parts.length > 2 || !prefix || !local) throw new XmlError(`malformed name "${qname}"`);
  const ns = prefix === 'xml' ? XML_NS : scope.get(prefix);
  if (!ns) throw new XmlError(`undeclared namespace prefix "${prefix}"`);
  return { ns, local };
}

function parseXml(input: string): XmlElement {
  const s = input.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  type Frame = { qname: string; el: XmlElement; scope: Map<string, string> };
  const stack: Frame[] = [];
  let root: XmlElement | undefined;
  let i = 0;
  const err = (msg: string) => new XmlError(`${msg} (at offset ${i})`);
  const ws = () => {
    while (s[i] === ' ' || s[i] === '\t' || s[i] === '\n') i++;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(s);
    if (!m) throw err('expected a name');
    i = NAME.lastIndex;
    return m[0];
  };

  while (i < s.length) {
    const lt = s.indexOf('<', i);
    if (lt !== i) {
      const end = lt < 0 ? s.length : lt;
      const text = decodeEntities(s.slice(i, end));
      const top = stack.at(-1);
      if (top) top.el.text += text;
      else if (/[^ \t\n]/.test(text)) throw err('text outside the root element');
      i = end;
    } else if (s.startsWith('<!--', i)) {
      const close = s.indexOf('-->', i + 4);
      if (close < 0) throw err('unterminated comment');
      i = close + 3;
    } else if (s.startsWith('<![CDATA[', i)) {
      const close = s.indexOf(']]>', i + 9);
      const top = stack.at(-1);
      if (close < 0) throw err('unterminated CDATA section');
      if (!top) throw err('CDATA outside the root element');
      top.el.text += s.slice(i + 9, close);
      i = close + 3;
    } else if (s.startsWith('<!DOCTYPE', i)) {
      if (root) throw err('DOCTYPE after the root element');
      // An internal subset can declare entities (billion laughs, external files) and default
      // attributes; Metalink needs none of that, so any `[` is refused.
      let quote = '';
      for (i += 9; i < s.length && (quote || s[i] !== '>'); i++) {
        const c = s[i];
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '[') throw err('DOCTYPE with entity declarations (internal subset) refused');
      }
      if (i >= s.length) throw err('unterminated DOCTYPE');
      i++;
    } else if (s.startsWith('<?', i)) {
      const close = s.indexOf('?>', i + 2);
      if (close < 0) throw err('unterminated processing instruction');
      if (/^<\?xml[\s?]/i.test(s.slice(i, i + 6)) && i !== 0) {
        throw err('XML declaration not at the start');
      }
      i = close + 2;
    } else if (s.startsWith('</', i)) {
      i += 2;
      const qname = name();
      ws();
      if (s[i] !== '>') throw err('malformed end tag');
      const top = stack.pop();
      if (top?.qname !== qname) throw err(`unexpected </${qname}>`);
      i++;
    } else {
      i++;
      if (root && stack.length === 0) throw err('a second root element');
      const qname = name();
      const raw: Array<[string, string]> = [];
      const seenAttrs = new Set<string>();
      for (;;) {
        const before = i;
        ws();
        if (s[i] === '>' || s.startsWith('/>', i)) break;
        if (i === before || i >= s.length) throw err(`malformed start tag <${qname}>`);
        const attr = name();
        ws();
        if (s[i] !== '=') throw err(`attribute "${attr}" has no value`);
        i++;
        ws();
        const quote = s[i];
        if (quote !== '"' && quote !== "'") throw err(`attribute "${attr}" is not quoted`);
        const close = s.indexOf(quote, i + 1);
        if (close < 0) throw err(`unterminated attribute "${attr}"`);
        const value = s.slice(i + 1, close);
        if (value.includes('<')) throw err(`"<" in attribute "${attr}"`);
        if (seenAttrs.has(attr)) throw err(`duplicate attribute "${attr}"`);
        seenAttrs.add(attr);
        // Attribute-value normalization: literal whitespace becomes a space, references do not.
        raw.push([attr, decodeEntities(value.replace(/[\t\n]/g, ' '))]);
        i = close + 1;
      }
      const selfClosing = s[i] === '/';
      i += selfClosing ? 2 : 1;

      const parent = stack.at(-1);
      let scope = parent?.scope ?? new Map<string, string>();
      let ownScope = false; // copy-on-write: most elements declare no namespaces
      const attrs = new Map<string, string>();
      for (const [attr, value] of raw) {
        if (attr === 'xmlns' || attr.startsWith('xmlns:')) {
          if (!ownScope) scope = new Map(scope);
          ownScope = true;
          const prefix = attr.slice(6);
          if (prefix !== '' && value === '') throw err(`empty namespace for prefix "${prefix}"`);
          scope.set(prefix, value);
        } else {
          attrs.set(attr, value);
        }
      }
      const el: XmlElement = { ...resolveName(qname, scope), attrs, children: [], text: '' };
      if (parent) parent.el.children.push(el);
      else root = el;
      if (!selfClosing) stack.push({ qname, el, scope });
      if (stack.length > MAX_DEPTH) throw err('elements nested too deeply');
    }
  }
  if (stack.length > 0) throw err(`unclosed <${stack.at(-1)!.qname}>`);
  if (!root) throw err('no root element');
  return root;
}

// --- Metalink ------------------------------------------------------------------------------------

/** Why `name` is unsafe as a relative download path (RFC 5854 §4.1.2.1), or undefined. */
export function metalinkNameProblem(name: string): string | undefined {
  if (name === '') return 'it is empty';
  if (name.includes('\\')) return 'it contains a backslash';
  // eslint-disable-next-line no-control-regex -- control characters are what this rejects
  if (/[\x00-\x1f\x7f]/.test(name)) return 'it contains control characters';
  if (name.startsWith('/')) return 'it is an absolute path';
  if (/^[a-z]:/i.test(name)) return 'it starts with a drive letter';
  const segments = name.split('/');
  if (segments.length > MAX_PATH_DEPTH) return `it is nested deeper than ${MAX_PATH_DEPTH} levels`;
  for (const segment of segments) {
    if (segment === '..') return 'it contains a ".." segment';
    if (segment === '.') return 'it contains a "." segment';
    if (segment === '') return 'it contains an empty path segment';
  }
  return undefined;
}

export const isSafeMetalinkName = (name: string): boolean => metalinkNameProblem(name) === undefined;

class MetalinkError extends Error {}

const isMetalink = (el: XmlElement, local: string) => el.local === local && (el.ns === METALINK_NS || el.ns === '');
const childrenNamed = (el: XmlElement, local: string) => el.children.filter((c) => isMetalink(c, local));
function childText(el: XmlElement, local: string): string | undefined {
  const text = childrenNamed(el, local)[0]?.text.trim();
  return text ? text : undefined;
}

function positiveInt(value: string | undefined, max = Number.MAX_SAFE_INTEGER) {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  const n = Number(value.trim());
  return n >= 1 && n <= max ? n : undefined;
}

function httpUrl(text: string, baseUrl: string | undefined): string | undefined {
  if (text.trim() === '') return undefined; // would resolve to the base itself
  return parseHttpUrl(text.trim(), baseUrl)?.href;
}

function checkedName(name: string | undefined, what: string): string {
  if (name === undefined) throw new MetalinkError(`${what} has no name`);
  const problem = metalinkNameProblem(name);
  if (problem)
    throw new MetalinkError(`unsafe file name ${JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name)}: ${problem}`);
  return sanitizeRelativePath(name);
}

function readPieces(el: XmlElement, name: string, size: number | undefined) {
  let best: MetalinkPieces | undefined;
  for (const p of childrenNamed(el, 'pieces')) {
    const algorithm = normalizeDigestAlgorithm(p.attrs.get('type') ?? '');
    if (!algorithm) continue; // an algorithm we cannot compute
    const length = positiveInt(p.attrs.get('length'));
    if (length === undefined) throw new MetalinkError(`invalid piece length for "${name}"`);
    const hashes = childrenNamed(p, 'hash').map((h) => {
      const bytes = hexToBytes(h.text);
      if (bytes?.length !== DIGEST_LENGTH[algorithm]) {
        throw new MetalinkError(`invalid ${algorithm} piece hash for "${name}"`);
      }
      return bytes;
    });
    if (size !== undefined && hashes.length !== Math.ceil(size / length)) {
      throw new MetalinkError(`"${name}" has ${hashes.length} piece hashes, ${Math.ceil(size / length)} expected`);
    }
    if (!best || DIGEST_STRENGTH.indexOf(algorithm) < DIGEST_STRENGTH.indexOf(best.algorithm)) {
      best = { algorithm, length, hashes };
    }
  }
  return best;
}

const byPriority = <T extends { priority?: number }>(list: T[]) =>
  list.sort((a, b) => (a.priority ?? 1_000_000) - (b.priority ?? 1_000_000)); // stable

function readFile(el: XmlElement, baseUrl: string | undefined): MetalinkFile {
  const name = checkedName(el.attrs.get('name'), 'a <file>');
  const file: MetalinkFile = { name, hashes: [], urls: [] };

  const sizeText = childText(el, 'size');
  if (sizeText !== undefined) {
    const size = /^\d+$/.test(sizeText) ? Number(sizeText) : NaN;
    if (!Number.isSafeInteger(size)) throw new MetalinkError(`invalid size for "${name}"`);
    file.size = size;
  }

  for (const h of childrenNamed(el, 'hash')) {
    const algorithm = normalizeDigestAlgorithm(h.attrs.get('type') ?? '');
    if (!algorithm) continue;
    const digest = digestFromHex(algorithm, h.text);
    if (!digest) throw new MetalinkError(`invalid ${algorithm} hash for "${name}"`);
    const same = file.hashes.find((d) => d.algorithm === algorithm);
    if (same && !sameDigest(same, digest)) {
      throw new MetalinkError(`conflicting ${algorithm} hashes for "${name}"`);
    }
    if (!same) file.hashes.push(digest);
  }

  const pieces = readPieces(el, name, file.size);
  if (pieces) file.pieces = pieces;

  const seen = new Set<string>();
  for (const u of childrenNamed(el, 'url')) {
    const url = httpUrl(u.text, baseUrl);
    if (url === undefined || seen.has(url)) continue;
    seen.add(url);
    const entry: MetalinkUrl = { url };
    const priority = positiveInt(u.attrs.get('priority'), 999999);
    if (priority !== undefined) entry.priority = priority;
    const location = u.attrs.get('location')?.trim();
    if (location && /^[a-z]{2}$/i.test(location)) entry.location = location.toLowerCase();
    file.urls.push(entry);
  }
  byPriority(file.urls);
  return file;
}

/**
 * A Metalink 4 document. `baseUrl` (where the document came from) resolves relative URLs; without
 * it they are dropped. Unknown elements and hash types are ignored; unsafe or duplicate names,
 * malformed known hashes and sizes are errors, since acting on them could write the wrong file.
 */
export function parseMetalink(xml: string, baseUrl?: string): MetalinkResult {
  try {
    const root = parseXml(xml);
    if (!isMetalink(root, 'metalink')) {
      const ns = root.ns ? ` in namespace ${root.ns}` : '';
      return { error: `not a Metalink 4 document (root element <${root.local}>${ns})` };
    }
    const files = childrenNamed(root, 'file').map((el) => readFile(el, baseUrl));
    if (files.length === 0) return { error: 'the Metalink describes no files' };
    const names = new Set<string>();
    for (const f of files) {
      if (names.has(f.name)) return { error: `file name "${f.name}" appears twice` };
      names.add(f.name);
    }
    return { files };
  } catch (e) {
    if (e instanceof XmlError) return { error: `malformed XML: ${e.message}` };
    if (e instanceof MetalinkError) return { error: e.message };
    throw e;
  }
}
