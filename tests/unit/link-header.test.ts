import { describe, expect, it } from 'vitest';
import { type DescribedBy, type LinkMirror, duplicatesFromLink, parseLinkHeader } from '../../src/engine/sources/link-header';

type Simple = { target: string; rel: string[]; params: Record<string, string> };
const simple = (value: string | null): Simple[] => parseLinkHeader(value).map((l) => ({ ...l, params: Object.fromEntries(l.params) }));

describe('parseLinkHeader', () => {
  it.each<[string, Simple[]]>([
    ['<http://a/x>; rel=duplicate', [{ target: 'http://a/x', rel: ['duplicate'], params: { rel: 'duplicate' } }]],
    [
      '<http://a/x>; rel="duplicate"; pri=1; pref; geo=de',
      [
        {
          target: 'http://a/x',
          rel: ['duplicate'],
          params: { rel: 'duplicate', pri: '1', pref: '', geo: 'de' },
        },
      ],
    ],
    [
      '<http://a/x>;rel=duplicate,<http://b/x>;rel=duplicate',
      [
        { target: 'http://a/x', rel: ['duplicate'], params: { rel: 'duplicate' } },
        { target: 'http://b/x', rel: ['duplicate'], params: { rel: 'duplicate' } },
      ],
    ],
    [
      // Commas inside quoted strings and inside <…> do not split links.
      '<http://a/x?a=1,2>; rel="duplicate"; title="one, two; three", <http://b/y>; rel=next',
      [
        {
          target: 'http://a/x?a=1,2',
          rel: ['duplicate'],
          params: { rel: 'duplicate', title: 'one, two; three' },
        },
        { target: 'http://b/y', rel: ['next'], params: { rel: 'next' } },
      ],
    ],
    [
      '<a.meta4>; rel="describedby duplicate"; type="application/metalink4+xml"',
      [
        {
          target: 'a.meta4',
          rel: ['describedby', 'duplicate'],
          params: { rel: 'describedby duplicate', type: 'application/metalink4+xml' },
        },
      ],
    ],
    [
      // Unquoted values may hold `/`, `+` and `=` (RFC 8288 B.2 reads up to `;` or `,`).
      '<m>; rel=describedby; type=application/metalink4+xml; x=a=b',
      [
        {
          target: 'm',
          rel: ['describedby'],
          params: { rel: 'describedby', type: 'application/metalink4+xml', x: 'a=b' },
        },
      ],
    ],
    [
      '  < http://a/ >  ;  REL = "Duplicate"  ;  PRI = 5 ; Pref  ',
      [{ target: 'http://a/', rel: ['duplicate'], params: { rel: 'Duplicate', pri: '5', pref: '' } }],
    ],
    ['<u>; title="a \\"quoted\\" \\\\ word"', [{ target: 'u', rel: [], params: { title: 'a "quoted" \\ word' } }]],
    [
      // The first occurrence of a parameter wins.
      '<u>; rel=duplicate; rel=next; pri=1; pri=2',
      [{ target: 'u', rel: ['duplicate'], params: { rel: 'duplicate', pri: '1' } }],
    ],
    ['<u>', [{ target: 'u', rel: [], params: {} }]],
    ['<>; rel=self', [{ target: '', rel: ['self'], params: { rel: 'self' } }]],
    ["<u>; title*=UTF-8'de'n%c3%a4chstes", [{ target: 'u', rel: [], params: { 'title*': "UTF-8'de'n%c3%a4chstes" } }]],
    ['<u>; rel="  duplicate \t  next "', [{ target: 'u', rel: ['duplicate', 'next'], params: { rel: '  duplicate \t  next ' } }]],
    [
      ',, <u>; rel=a ,, <v>; rel=b,',
      [
        { target: 'u', rel: ['a'], params: { rel: 'a' } },
        { target: 'v', rel: ['b'], params: { rel: 'b' } },
      ],
    ],
  ])('parses %j', (value, expected) => {
    expect(simple(value)).toEqual(expected);
  });

  it.each<[string, string[]]>([
    // Malformed link-values are skipped; the parse resumes at the next top-level comma.
    ['garbage, <http://b/>; rel=duplicate', ['http://b/']],
    ['http://a/; rel=duplicate, <http://b/>; rel=duplicate', ['http://b/']],
    ['<http://a/> rel=duplicate, <http://b/>; rel=duplicate', ['http://b/']],
    ['<http://a/>; rel="dup, x" junk, <http://b/>; rel=duplicate', ['http://b/']],
    ['<http://a/>; =x, <http://b/>; rel=duplicate', ['http://b/']],
    ['<http://a/>; rel="unterminated, <http://b/>; rel=duplicate', []],
    ['<http://a/; rel=duplicate', []],
    ['<http://a/>; rel=duplicate, <http://b/', ['http://a/']],
    ['', []],
    [';;;', []],
  ])('skips malformed links in %j', (value, targets) => {
    expect(parseLinkHeader(value).map((l) => l.target)).toEqual(targets);
  });

  it('returns nothing for a missing header', () => {
    expect(parseLinkHeader(null)).toEqual([]);
  });
});

describe('duplicatesFromLink', () => {
  const BASE = 'https://example.com/pub/file.iso';
  const mirrors = (values: string[], base = BASE) => duplicatesFromLink(values, base).mirrors;
  const describedBy = (values: string[], base = BASE) => duplicatesFromLink(values, base).describedBy;

  it('reads a realistic MirrorBrain response', () => {
    const result = duplicatesFromLink(
      [
        '<https://example.com/pub/file.iso.meta4>; rel=describedby; type="application/metalink4+xml"',
        '<http://ftp.de.example.net/pub/file.iso>; rel=duplicate; pri=1; geo=de',
        '<http://mirror.example.org/file.iso>; rel=duplicate; pri=2; geo=US; depth=1',
        '<https://fast.example.org/file.iso>; rel=duplicate; pref; pri=3',
      ],
      BASE,
    );
    expect(result).toEqual<{ mirrors: LinkMirror[]; describedBy: DescribedBy[] }>({
      mirrors: [
        { url: 'https://fast.example.org/file.iso', pri: 3, pref: true },
        { url: 'http://ftp.de.example.net/pub/file.iso', pri: 1, pref: false, geo: 'de' },
        { url: 'http://mirror.example.org/file.iso', pri: 2, pref: false, geo: 'us', depth: 1 },
      ],
      describedBy: [{ url: 'https://example.com/pub/file.iso.meta4', type: 'application/metalink4+xml' }],
    });
  });

  it('accepts several links in one header value', () => {
    expect(mirrors(['<http://a/f>; rel=duplicate, <http://b/f>; rel="duplicate"; pri=7']).map((m) => m.url)).toEqual([
      'http://b/f',
      'http://a/f',
    ]);
  });

  it.each<[string, string | undefined]>([
    ['<http://other.net/f.iso>; rel=duplicate', 'http://other.net/f.iso'],
    ['<//cdn.example.net/f.iso>; rel=duplicate', 'https://cdn.example.net/f.iso'],
    ['</mirror/f.iso>; rel=duplicate', 'https://example.com/mirror/f.iso'],
    ['<../alt/file.iso>; rel=duplicate', 'https://example.com/alt/file.iso'],
    ['<HTTP://Other.NET/a%20b>; rel=duplicate', 'http://other.net/a%20b'],
    ['<ftp://ftp.example.com/f.iso>; rel=duplicate', undefined],
    ['<data:,hello>; rel=duplicate', undefined],
    ['<javascript:alert(1)>; rel=duplicate', undefined],
    ['<http://[bad>; rel=duplicate', undefined],
    ['<http://other.net/f.iso>; rel=alternate', undefined],
    ['<http://other.net/f.iso>; rel=duplicates', undefined],
    ['<http://other.net/f.iso>', undefined],
    [`<${BASE}>; rel=duplicate`, undefined], // the response itself is not its own mirror
    ['<file.iso>; rel=duplicate', undefined],
  ])('resolves and filters %j', (value, url) => {
    expect(mirrors([value]).map((m) => m.url)).toEqual(url === undefined ? [] : [url]);
  });

  it.each<[string, Partial<LinkMirror>]>([
    ['pri=1', { pri: 1 }],
    ['pri=999999', { pri: 999999 }],
    ['pri="42"', { pri: 42 }],
    ['pri=0', {}],
    ['pri=1000000', {}],
    ['pri=-1', {}],
    ['pri=1.5', {}],
    ['pri=abc', {}],
    ['pri=', {}],
    ['pref', { pref: true }],
    ['pref=1', { pref: true }],
    ['PREF', { pref: true }],
    ['geo=de', { geo: 'de' }],
    ['geo=GB', { geo: 'gb' }],
    ['geo=deu', {}],
    ['geo=d', {}],
    ['geo=1a', {}],
    ['depth=0', { depth: 0 }],
    ['depth=3', { depth: 3 }],
    ['depth=-1', {}],
    ['depth=x', {}],
  ])('reads the parameter %j', (param, expected) => {
    expect(mirrors([`<http://m/f>; rel=duplicate; ${param}`])).toEqual([{ url: 'http://m/f', pref: false, ...expected }]);
  });

  it('orders preferred mirrors first, then by pri, unprioritized last, else header order', () => {
    const value = [
      '<http://none1/>; rel=duplicate',
      '<http://pri5/>; rel=duplicate; pri=5',
      '<http://pref-none/>; rel=duplicate; pref',
      '<http://pri1/>; rel=duplicate; pri=1',
      '<http://none2/>; rel=duplicate',
      '<http://pref-pri9/>; rel=duplicate; pref; pri=9',
      '<http://pri5b/>; rel=duplicate; pri=5',
      '<http://pref-pri2/>; rel=duplicate; pref; pri=2',
    ].join(', ');
    expect(mirrors([value]).map((m) => new URL(m.url).host)).toEqual([
      'pref-pri2',
      'pref-pri9',
      'pref-none',
      'pri1',
      'pri5',
      'pri5b',
      'none1',
      'none2',
    ]);
  });

  it('lists a mirror once, with its first announcement', () => {
    expect(mirrors(['<http://a/f>; rel=duplicate; pri=3', '<http://a/f>; rel=duplicate; pri=1'])).toEqual([
      { url: 'http://a/f', pri: 3, pref: false },
    ]);
  });

  it.each<[string, boolean]>([
    [`<http://m/f>; rel=duplicate; anchor="${BASE}"`, true],
    ['<http://m/f>; rel=duplicate; anchor="file.iso"', true],
    ['<http://m/f>; rel=duplicate; anchor="other.iso"', false],
    ['<http://m/f>; rel=duplicate; anchor="#part"', false],
  ])('honours the anchor in %j', (value, kept) => {
    expect(mirrors([value])).toHaveLength(kept ? 1 : 0);
  });

  it.each<[string[], DescribedBy[]]>([
    [
      ['<file.iso.meta4>; rel=describedby; type="application/metalink4+xml"'],
      [{ url: 'https://example.com/pub/file.iso.meta4', type: 'application/metalink4+xml' }],
    ],
    [['<http://x/m>; rel=describedby; type=Application/Metalink4+XML'], [{ url: 'http://x/m', type: 'application/metalink4+xml' }]],
    [['<http://x/m>; rel=describedby'], [{ url: 'http://x/m' }]],
    [['<http://x/m>; rel=describedby; type=""'], [{ url: 'http://x/m' }]],
    [['<http://x/m>; rel="duplicate describedby"'], [{ url: 'http://x/m' }]],
    [['<http://x/m>; rel=describedby', '<http://x/m>; rel=describedby; type=a/b'], [{ url: 'http://x/m' }]],
    [['<ftp://x/m>; rel=describedby'], []],
    [['<http://x/m>; rel=describedby; anchor="http://elsewhere/"'], []],
  ])('describedby from %j', (values, expected) => {
    expect(describedBy(values)).toEqual(expected);
  });

  it('returns nothing for an unusable base URL or no headers', () => {
    expect(duplicatesFromLink(['<http://m/f>; rel=duplicate'], 'not a url')).toEqual({
      mirrors: [],
      describedBy: [],
    });
    expect(duplicatesFromLink(['<http://m/f>; rel=duplicate'], 'ftp://host/f')).toEqual({
      mirrors: [],
      describedBy: [],
    });
    expect(duplicatesFromLink([], BASE)).toEqual({ mirrors: [], describedBy: [] });
  });

  it('ignores a fragment on the base URL', () => {
    const base = `${BASE}#section`;
    expect(mirrors([`<${BASE}>; rel=duplicate`, '<http://m/f>; rel=duplicate; anchor="file.iso"'], base)).toEqual([
      { url: 'http://m/f', pref: false },
    ]);
  });

  it('a malformed header does not hide the mirrors in the others', () => {
    expect(mirrors(['<http://a/f; rel=duplicate', '<http://b/f>; rel=duplicate']).map((m) => m.url)).toEqual(['http://b/f']);
  });
});
