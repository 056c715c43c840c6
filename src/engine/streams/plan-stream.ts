import { isDashText, looksLikeDashManifest } from './dash-manifest';
import { planDashStream, readDashStream } from './dash-plan';
import { looksLikeHlsPlaylist, refuseSite, type HlsVariant } from './hls-playlist';
import { planHlsStream, PlanRequests, readHlsStream, type PlanOptions, type StreamPlan } from './stream-plan';

/** Whether a response is a stream's manifest (an HLS playlist or a DASH manifest), by its type or its name. */
export function looksLikeStreamManifest(url: string, contentType: string | undefined): boolean {
  return looksLikeHlsPlaylist(url, contentType) || looksLikeDashManifest(url, contentType);
}

/** Lays a stream out as one file: an HLS playlist or a DASH manifest, told apart by its text. */
export async function planStream(url: string, options: PlanOptions & { name?: string }): Promise<StreamPlan> {
  // Before any request: a refused site's manifest is not even read.
  refuseSite(url, options.pageUrl);
  const text = await new PlanRequests(options).playlist(url);
  return isDashText(text) ? planDashStream(url, text, options) : planHlsStream(url, options, text);
}

/** What a stream offers, read before any segment is asked: for the pages' list. */
export interface StreamOffer {
  /** The qualities, the best (the default choice) first. */
  variants: HlsVariant[];
  durationSeconds?: number;
  /** The URLs that are this same stream (a master's media playlists): a tab loading them adds no other stream. */
  covers: string[];
  /** A live HLS stream (its playlist has no end): recorded, not downloaded. */
  live: boolean;
}

/** Reads a stream's manifest (HLS or DASH) for what it offers; refusals throw a StreamRefusal. */
export async function readStreamOffer(url: string, options: PlanOptions): Promise<StreamOffer> {
  refuseSite(url, options.pageUrl);
  const text = await new PlanRequests(options).playlist(url);
  if (isDashText(text)) {
    const { variants, durationSeconds } = readDashStream(url, text, options);
    return { variants, durationSeconds, covers: [url], live: false };
  }
  const { variants, media } = await readHlsStream(url, { ...options, live: true }, text);
  const live = media[0]?.live === true;
  return {
    variants,
    live,
    // A live playlist's duration is its window's, not the stream's.
    durationSeconds: live ? undefined : media[0]?.durationSeconds,
    covers: [...variants.flatMap((variant) => variant.uris), ...media.map((m) => m.url)],
  };
}
