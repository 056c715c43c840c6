import { filenameFromUrl, sanitizeFilename, sourceRefusal } from '../../engine';

/**
 * What Stitch tells aria2 about one download, with Stitch's own promises kept:
 * - every mirror it knows goes along as another URI of the one download, so aria2 fetches from
 *   all of them, once it passed the checks of any source (sourceRefusal: http(s) only, nothing
 *   local for a public download, no plain http for an https one unless the digest covers it);
 * - a known digest becomes aria2's `checksum` option, so aria2 verifies the file;
 * - the name (the one Stitch knows, else the URL's) goes through the same sanitizer as every other
 *   name, so the server's Content-Disposition does not name the file;
 * - aria2 follows no Metalink or torrent found in a downloaded body (by default it would, to any
 *   address, with names the server chose), unless the user sent one on purpose (`purpose`);
 * - the page's address (Referer) goes only where the browser itself would send it. aria2 sends one
 *   download's headers to all of its URIs, so a download with a Referer is handed over with the URIs
 *   of the file's own origin only; a mirror elsewhere would get it too. No cookies are passed: aria2
 *   would need them as a header for every URI, and Stitch would need the `cookies` permission to read
 *   them. A download that needs them is refused by its server in aria2, and the popup offers to run it
 *   in Stitch instead.
 */
export interface HandoffFacts {
  url: string;
  mirrors: readonly string[];
  name?: string;
  /** The digests known (algorithms named as aria2 names them: sha-256, sha-1, md5…); the strongest is passed. */
  digests?: readonly { algorithm: string; hex: string }[];
  /** The page the download came from, sent to `url`'s origin only. */
  referrer?: string;
}

/**
 * Who sent the download: 'user' (Send to aria2 on a row or a link) or 'rule' (an aria2 rule of the
 * options page). Only the user's own choice of a torrent or Metalink (a `magnet:` link, or a URL
 * whose name ends in .torrent, .meta4 or .metalink) lets aria2 follow what it downloads.
 */
export type HandoffPurpose = 'user' | 'rule';

export interface Handoff {
  uris: string[];
  options: Record<string, string | string[]>;
  /** Mirrors left out: the download's Referer would have reached them, or a source check refused them. */
  leftOut: string[];
}

/** Strongest first: aria2 checks one digest per download. */
const DIGEST_PREFERENCE = ['sha-512', 'sha-256', 'sha-1', 'md5'];

/** aria2's own bound on connections to one server (its max-connection-per-server). */
const ARIA2_MAX_CONNECTIONS_PER_SERVER = 16;

/** `connectionsPerServer`: the user's setting, which Stitch's own downloads obey too. */
export function planHandoff(facts: HandoffFacts, connectionsPerServer: number, purpose: HandoffPurpose): Handoff {
  const digest = DIGEST_PREFERENCE.map((a) => facts.digests?.find((d) => d.algorithm === a)).find((d) => d !== undefined);
  const origin = new URL(facts.url).origin;
  const mirrors = [...new Set(facts.mirrors)].filter((m) => m !== facts.url);
  const kept = mirrors.filter(
    (m) =>
      sourceRefusal(m, facts.url, { covered: digest !== undefined }) === undefined && (!facts.referrer || new URL(m).origin === origin),
  );
  const followed = purpose === 'user' ? metadataOf(facts.url) : undefined;
  const options: Record<string, string | string[]> = {
    'follow-torrent': String(followed === 'torrent'),
    'follow-metalink': String(followed === 'metalink'),
  };
  const name = facts.name ?? filenameFromUrl(facts.url);
  if (name) options.out = sanitizeFilename(name);
  if (digest) options.checksum = `${digest.algorithm}=${digest.hex}`;
  if (facts.referrer) options.referer = facts.referrer;
  // aria2 opens one connection per server unless told; the file is split for every connection of every URI.
  const perServer = Math.max(1, Math.min(ARIA2_MAX_CONNECTIONS_PER_SERVER, connectionsPerServer));
  options['max-connection-per-server'] = String(perServer);
  options.split = String(perServer * (1 + kept.length));
  // aria2 splits nothing under 20 MiB by default, so a smaller file would never reach a second mirror.
  options['min-split-size'] = '1M';
  return { uris: [facts.url, ...kept], options, leftOut: mirrors.filter((m) => !kept.includes(m)) };
}

/** What a URL the user sent is by its own words: a torrent (`magnet:`, `*.torrent`), a Metalink (`*.meta4`, `*.metalink`), or neither. */
function metadataOf(url: string): 'torrent' | 'metalink' | undefined {
  if (/^magnet:/i.test(url)) return 'torrent';
  const name = filenameFromUrl(url)?.toLowerCase() ?? '';
  if (name.endsWith('.torrent')) return 'torrent';
  return name.endsWith('.meta4') || name.endsWith('.metalink') ? 'metalink' : undefined;
}
