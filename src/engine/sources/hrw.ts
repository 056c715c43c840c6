/**
 * Highest Random Weight (rendezvous) ordering (Thaler & Ravishankar; docs/papers.md, request redirection): every (file,
 * mirror) pair gets a pseudo-random score and each file sorts the mirrors by it. All clients agree
 * on a file's order without coordination, so caches stay warm, different files spread evenly over
 * the mirrors, and removing a mirror only moves the files it was first for, evenly onto the rest.
 */

/**
 * cyrb53 (bryc, public domain): a fast, well-mixed 53-bit string hash. Not cryptographic; the
 * scores only need to be uniform and deterministic across runs and platforms.
 */
function cyrb53(s: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The weight of `key` (a mirror) for `fileKey`; higher is tried first. */
export function hrwScore(fileKey: string, key: string): number {
  return cyrb53(`${fileKey}\n${key}`);
}

/**
 * `items` in descending HRW score for `fileKey` (a new array). The order depends only on the keys,
 * not on the input order (equal keys keep theirs), so removing an item leaves the relative order
 * of the others unchanged.
 */
export function hrwOrder<T>(items: readonly T[], key: (t: T) => string, fileKey: string): T[] {
  return items
    .map((item) => {
      const k = key(item);
      return { item, k, score: hrwScore(fileKey, k) };
    })
    .sort((a, b) => b.score - a.score || (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
    .map((e) => e.item);
}

/** What a source says about a mirror's order: Link `pri`/`geo`, Metalink `priority`/`location`. */
export interface SourceHint {
  /** Lower comes first (1 = most preferred); missing after every given one. */
  priority?: number;
  /** ISO 3166-1 alpha-2 country code of the mirror, lower case. */
  location?: string;
}

/** The country of a locale such as `de-AT`, `en_US.UTF-8` or `pt-BR`, lower case; undefined without one. */
export function countryOfLocale(locale: string | undefined): string | undefined {
  const region = /^[a-z]{2,3}[-_]([a-z]{2})\b/i.exec(locale ?? '')?.[1];
  return region?.toLowerCase();
}

/**
 * The HRW order refined by what the sources say (RFC 6249 `pri`/`geo`, RFC 5854
 * `priority`/`location`): by priority first, then mirrors in the user's country, and within
 * each tier by HRW score, so clients still agree on an order and spread evenly.
 */
export function rankedOrder<T>(
  items: readonly T[],
  key: (t: T) => string,
  fileKey: string,
  hint: (t: T) => SourceHint | undefined,
  userLocation?: string,
): T[] {
  const tier = (t: T) => {
    const h = hint(t);
    const priority = h?.priority ?? 1_000_000;
    const away = userLocation && h?.location === userLocation ? 0 : 1;
    return priority * 2 + away;
  };
  const hrw = hrwOrder(items, key, fileKey);
  const position = new Map(hrw.map((t, i) => [t, i]));
  return hrw.sort((a, b) => tier(a) - tier(b) || position.get(a)! - position.get(b)!);
}
