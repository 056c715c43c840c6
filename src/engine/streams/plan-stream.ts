import { isDashText, looksLikeDashManifest } from './dash-manifest';
import { planDashStream } from './dash-plan';
import { looksLikeHlsPlaylist, refuseSite } from './hls-playlist';
import { planHlsStream, PlanRequests, type PlanOptions, type StreamPlan } from './stream-plan';

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
