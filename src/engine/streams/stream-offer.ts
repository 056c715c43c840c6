import { isDashText } from './dash-manifest';
import { readDashStream } from './dash-plan';
import { parseHlsPlaylist, refuseSite, StreamRefusal, type HlsVariant } from './hls-playlist';
import { usableVariants } from './hls-trust';
import { PlanRequests, type PlanOptions } from './stream-plan';

/** What one of a stream's manifests tells, read before any segment is asked: for the pages' list. */
export interface StreamOffer {
  /** The qualities a master playlist or a DASH manifest lists, the best first; empty for a media playlist. */
  variants: HlsVariant[];
  /** A media playlist's or a DASH manifest's; a master playlist says none. */
  durationSeconds?: number;
  /** The URLs that are this same stream (a master's media playlists): a tab loading them adds no other stream. */
  covers: string[];
  /** A live HLS stream (its playlist has no end): recorded, not downloaded. */
  live: boolean;
}

/**
 * Reads the one manifest at `url` (HLS or DASH) for what it offers, and nothing it names: the
 * stream finder reads only what a tab's player loaded itself, so a page cannot choose the
 * requests Stitch makes without the user asking (a master's media playlists are read when the
 * player loads them, not before). Refusals throw a StreamRefusal.
 */
export async function readStreamOffer(url: string, options: PlanOptions): Promise<StreamOffer> {
  refuseSite(url, options.pageUrl);
  const text = await new PlanRequests(options).playlist(url);
  if (isDashText(text)) {
    const { variants, durationSeconds } = readDashStream(url, text, options);
    return { variants, durationSeconds, covers: [url], live: false };
  }
  const playlist = parseHlsPlaylist(text, url);
  if (playlist.kind === 'master') {
    // What the download would leave out (local hosts of a public playlist…) is not offered either.
    const variants = usableVariants(playlist.variants, url, []).sort((a, b) => (b.bandwidth ?? 0) - (a.bandwidth ?? 0));
    if (variants.length === 0) throw new StreamRefusal('empty', `${url} lists no variant of the stream`);
    if (variants[0]!.separateAudio) throw new StreamRefusal('separate-audio', "this stream's sound is in a playlist of its own");
    return { variants, covers: variants.flatMap((variant) => variant.uris), live: false };
  }
  // A live playlist's duration is its window's, not the stream's.
  return { variants: [], live: playlist.live, durationSeconds: playlist.live ? undefined : playlist.durationSeconds, covers: [url] };
}
