import { MAX_KEYS, shown, StreamBoundsError, uriRefusal } from './stream-bounds';
import type { HlsSegment, HlsVariant } from './hls-playlist';

/**
 * The trust rules (request-trust.ts's sourceRefusal) applied to what an HLS playlist names, when
 * the plan is made: a public playlist cannot name a local address, nor an https one a plain-http
 * URI, anywhere. The requester refuses such requests too; here they are refused before any is
 * made, with words that name the URI and the playlist.
 */

/**
 * The variants of a master playlist (at `playlistUrl`, the user's) that may be used: each without
 * its refused hosts, and without the variants left with none or whose EXT-X-MEDIA groups name a
 * refused URI. What was left out goes in `notes`, in one line.
 */
export function usableVariants(variants: readonly HlsVariant[], playlistUrl: string, notes: string[]): HlsVariant[] {
  let dropped = 0;
  let first: string | undefined;
  const refused = (uri: string) => {
    const refusal = uriRefusal(uri, playlistUrl);
    if (refusal) {
      dropped++;
      first ??= refusal;
    }
    return refusal !== undefined;
  };
  const usable: HlsVariant[] = [];
  for (const variant of variants) {
    if ((variant.renditions ?? []).filter(refused).length > 0) continue;
    const uris = variant.uris.filter((uri) => !refused(uri));
    if (uris.length > 0) usable.push({ ...variant, uris });
  }
  if (first !== undefined) {
    const others = dropped > 1 ? ` (and ${dropped - 1} more)` : '';
    const line = `left out what ${shown(playlistUrl)} names that may not be requested: ${first}${others}`;
    if (usable.length === 0) throw new StreamBoundsError(`${line}; no variant is left to download`, 'unsafe-source');
    notes.push(line);
  }
  return usable;
}

/**
 * Refuses a media playlist (at `mediaUrl`) of the stream the user chose at `playlistUrl` that
 * names a refused segment, key or initialization section, or more distinct keys than MAX_KEYS: the
 * stream cannot be saved whole without them.
 */
export function checkMediaPlaylist(segments: readonly HlsSegment[], mediaUrl: string, playlistUrl: string): void {
  const keys = new Set<string>();
  for (const [index, segment] of segments.entries()) {
    const named: [string, string | undefined][] = [
      ['segment', segment.uri],
      ['key', segment.key?.uri],
      ['initialization section', segment.map?.uri],
    ];
    for (const [what, uri] of named) {
      const refusal = uri === undefined ? undefined : uriRefusal(uri, playlistUrl);
      if (refusal) {
        throw new StreamBoundsError(
          `the ${what} of segment ${index + 1} in ${shown(mediaUrl)} is refused: ${refusal}; nothing was requested from it`,
          'unsafe-source',
        );
      }
    }
    if (segment.key) keys.add(segment.key.uri);
  }
  if (keys.size > MAX_KEYS) {
    throw new StreamBoundsError(`${shown(mediaUrl)} names ${keys.size} keys, more than the ${MAX_KEYS} Stitch fetches for one stream`);
  }
}
