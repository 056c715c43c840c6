import { sanitizeFilename } from '../../engine';

/**
 * What Stitch tells aria2 about one download, with Stitch's own promises kept:
 * - every mirror it knows goes along as another URI of the one download, so aria2 fetches from
 *   all of them;
 * - a known digest becomes aria2's `checksum` option, so aria2 verifies the file;
 * - the name goes through the same sanitizer as every other name;
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

export interface Handoff {
  uris: string[];
  options: Record<string, string | string[]>;
  /** Mirrors left out because the download's Referer would have reached them. */
  leftOut: string[];
}

/** Strongest first: aria2 checks one digest per download. */
const DIGEST_PREFERENCE = ['sha-512', 'sha-256', 'sha-1', 'md5'];

/** aria2's own bound on connections to one server (its max-connection-per-server). */
const ARIA2_MAX_CONNECTIONS_PER_SERVER = 16;

/** `connectionsPerServer`: the user's setting, which Stitch's own downloads obey too. */
export function planHandoff(facts: HandoffFacts, connectionsPerServer: number): Handoff {
  const origin = new URL(facts.url).origin;
  const mirrors = [...new Set(facts.mirrors)].filter((m) => m !== facts.url);
  const kept = facts.referrer ? mirrors.filter((m) => new URL(m).origin === origin) : mirrors;
  const options: Record<string, string | string[]> = {};
  if (facts.name) options.out = sanitizeFilename(facts.name);
  const digest = DIGEST_PREFERENCE.map((a) => facts.digests?.find((d) => d.algorithm === a)).find((d) => d !== undefined);
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
