/**
 * Why a stream is refused, as data the pages put in words. `live`: an HLS stream with no end,
 * which can be recorded but not downloaded; `live-dash`: a dynamic DASH manifest, which cannot be
 * either; `unsafe-source`: it names a URI the trust rules refuse (request-trust.ts); `too-large`:
 * it goes past a bound Stitch sets on what one stream may cost (stream-bounds.ts, dash-bounds.ts).
 */
export type RefusalReason =
  'not-a-playlist' | 'drm' | 'live' | 'live-dash' | 'separate-audio' | 'empty' | 'site' | 'unsafe-source' | 'too-large';

/** Why a stream cannot be downloaded: `reason` for the pages, the message in English for the CLI and logs. */
export class StreamRefusal extends Error {
  override readonly name = 'StreamRefusal';
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}
