import type { StreamTimeline } from '../../engine/streams/stream-layout';

/**
 * A stream job's stored file as an HLS media playlist for hls.js: each segment a byte range of
 * the file (`fileUrl`), each initialization section an EXT-X-MAP. The stored file is the
 * segments laid end to end (stream-layout.ts), so the ranges follow from the parts' lengths.
 */
export function storedPlaylist(timeline: StreamTimeline, fileUrl: string): string {
  const longest = Math.max(1, ...timeline.parts.map((part) => part.seconds ?? 0));
  const lines = [
    '#EXTM3U',
    // 6: EXT-X-MAP in a media playlist (7 is what ffmpeg writes for fMP4).
    '#EXT-X-VERSION:7',
    `#EXT-X-TARGETDURATION:${Math.ceil(longest)}`,
    '#EXT-X-PLAYLIST-TYPE:VOD',
    '#EXT-X-MEDIA-SEQUENCE:0',
  ];
  const uri = JSON.stringify(fileUrl);
  let offset = 0;
  for (const { length, seconds } of timeline.parts) {
    if (seconds === undefined) lines.push(`#EXT-X-MAP:URI=${uri},BYTERANGE="${length}@${offset}"`);
    else lines.push(`#EXTINF:${seconds.toFixed(6)},`, `#EXT-X-BYTERANGE:${length}@${offset}`, fileUrl);
    offset += length;
  }
  lines.push('#EXT-X-ENDLIST', '');
  return lines.join('\n');
}
