/**
 * RFC 8288 `Link` header parsing, and the RFC 6249 (Metalink/HTTP) mirrors it can announce. Pure
 * and platform-free; malformed links are skipped, never thrown on.
 */
import { parseHttpUrl } from '../http/http-url';

export interface Link {
  /** The URI reference between `<` and `>`, unresolved. */
  target: string;
  /** Relation types, lower-cased (`rel="duplicate describedby"` gives two). */
  rel: string[];
  /**
   * Parameters by lower-cased name; the first occurrence wins; a parameter without a value
   * (`pref`) maps to ''. Extended `name*` values are kept undecoded.
   */
  params: Map<string, string>;
}

const OWS = ' \t';

/**
 * One header value, or several joined with commas (as `Headers.get` does). Follows the parsing
 * algorithm of RFC 8288 Appendix B, except that a malformed link-value is skipped up to the next
 * top-level comma instead of ending the parse, so one bad link cannot hide the others.
 */
export function parseLinkHeader(value: string | null): Link[] {
  if (value === null) return [];
  const s = value;
  const links: Link[] = [];
  let i = 0;

  const skip = (chars: string) => {
    while (i < s.length && chars.includes(s[i]!)) i++;
  };
  /** Past the next comma outside `<…>` and quoted strings. */
  const resync = () => {
    let inQuote = false;
    let inAngle = false;
    for (; i < s.length; i++) {
      const c = s[i];
      if (inQuote) {
        if (c === '\\') i++;
        else if (c === '"') inQuote = false;
      } else if (inAngle) {
        if (c === '>') inAngle = false;
      } else if (c === '"') inQuote = true;
      else if (c === '<') inAngle = true;
      else if (c === ',') break;
    }
  };
  const quoted = (): string | undefined => {
    let out = '';
    for (i++; i < s.length; i++) {
      const c = s[i]!;
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\\') i++;
      out += s.charAt(i);
    }
    return undefined; // unterminated
  };

  while (i < s.length) {
    skip(OWS + ',');
    if (i >= s.length) break;
    if (s[i] !== '<') {
      resync();
      continue;
    }
    const close = s.indexOf('>', i + 1);
    if (close < 0) break;
    const target = s.slice(i + 1, close).trim();
    i = close + 1;
    const params = new Map<string, string>();
    let ok = true;
    for (;;) {
      skip(OWS);
      if (i >= s.length || s[i] === ',') break;
      if (s[i] !== ';') {
        ok = false;
        break;
      }
      i++;
      skip(OWS);
      const nameStart = i;
      while (i < s.length && !'=;, \t'.includes(s[i]!)) i++;
      const name = s.slice(nameStart, i).toLowerCase();
      skip(OWS);
      let paramValue = '';
      if (s[i] === '=') {
        i++;
        skip(OWS);
        if (s[i] === '"') {
          const q = quoted();
          if (q === undefined) {
            ok = false;
            break;
          }
          paramValue = q;
        } else {
          const start = i;
          while (i < s.length && s[i] !== ';' && s[i] !== ',') i++;
          paramValue = s.slice(start, i).trim();
        }
      }
      if (name === '') {
        ok = false;
        break;
      }
      if (!params.has(name)) params.set(name, paramValue);
    }
    if (!ok) {
      resync();
      continue;
    }
    const rel = (params.get('rel') ?? '')
      .toLowerCase()
      .split(/[ \t]+/)
      .filter((r) => r !== '');
    links.push({ target, rel, params });
  }
  return links;
}

export interface LinkMirror {
  url: string;
  /** 1..999999, lower is tried first. */
  pri?: number;
  /** The server marks this mirror as preferred. */
  pref: boolean;
  /** ISO 3166-1 alpha-2 country code, lower-cased. */
  geo?: string;
  /** The `depth` parameter as announced (mirror directory depth, RFC 6249). */
  depth?: number;
}

export interface DescribedBy {
  url: string;
  /** Media type, lower-cased, e.g. `application/metalink4+xml`. */
  type?: string;
}

export const METALINK_MEDIA_TYPE = 'application/metalink4+xml';

function httpUrl(ref: string, base: string): string | undefined {
  return parseHttpUrl(ref, base)?.href;
}

function intParam(value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined || !/^\d{1,7}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

/**
 * RFC 6249 mirrors (`rel=duplicate`) and Metalink descriptions (`rel=describedby`) announced on a
 * response. `baseUrl` is the response URL (after redirects); relative targets resolve against it
 * and only http(s) results are kept. A link with an `anchor` naming another resource is about that
 * resource and is ignored; the response's own URL is not listed as its mirror.
 *
 * Mirrors come back preferred first, then by `pri` (missing last), otherwise in header order.
 *
 * The caller must check the RFC 6249 requirement that duplicates are only trusted together with a
 * whole-representation digest (`Digest` or `Repr-Digest`) on the same response, and must verify
 * the bytes against it; this function does not see the other headers.
 */
export function duplicatesFromLink(
  linkHeaderValues: readonly string[],
  baseUrl: string,
): { mirrors: LinkMirror[]; describedBy: DescribedBy[] } {
  const self = httpUrl(baseUrl, baseUrl)?.replace(/#.*$/, ''); // fragments never reach the server
  const mirrors: LinkMirror[] = [];
  const describedBy: DescribedBy[] = [];
  if (self === undefined) return { mirrors, describedBy };
  const seen = new Set([self]);
  const seenMeta = new Set<string>();

  for (const value of linkHeaderValues) {
    for (const link of parseLinkHeader(value)) {
      const anchor = link.params.get('anchor');
      if (anchor !== undefined && httpUrl(anchor, self) !== self) continue;
      const url = httpUrl(link.target, self);
      if (url === undefined) continue;
      if (link.rel.includes('duplicate') && !seen.has(url)) {
        seen.add(url);
        const m: LinkMirror = { url, pref: link.params.has('pref') };
        const pri = intParam(link.params.get('pri'), 1, 999999);
        if (pri !== undefined) m.pri = pri;
        const geo = link.params.get('geo');
        if (geo !== undefined && /^[a-z]{2}$/i.test(geo)) m.geo = geo.toLowerCase();
        const depth = intParam(link.params.get('depth'), 0, 9999999);
        if (depth !== undefined) m.depth = depth;
        mirrors.push(m);
      }
      if (link.rel.includes('describedby') && !seenMeta.has(url)) {
        seenMeta.add(url);
        const type = link.params.get('type')?.trim().toLowerCase();
        describedBy.push(type ? { url, type } : { url });
      }
    }
  }
  // Array.prototype.sort is stable, so equal mirrors keep the server's order.
  const rank = (m: LinkMirror) => m.pri ?? 1_000_000; // missing pri after every valid one
  mirrors.sort((a, b) => Number(b.pref) - Number(a.pref) || rank(a) - rank(b));
  return { mirrors, describedBy };
}
