import { Parser } from 'm3u8-parser';
import { describe, expect, it } from 'vitest';
import { storedPlaylist } from '../../../src/player/hls/stored-playlist';

const FILE = 'chrome-extension://abc/stored-stream';

/** The playlist as a reader other than hls.js sees it (videojs's parser). */
function parsed(text: string) {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

describe('the stored stream as a playlist', () => {
  it('makes each MPEG-TS segment a byte range of the stored file, one after the other', () => {
    const text = storedPlaylist(
      {
        durationSeconds: 4.98,
        parts: [
          { length: 1000, seconds: 2 },
          { length: 500, seconds: 2.5 },
          { length: 300, seconds: 0.48 },
        ],
      },
      FILE,
    );
    expect(text).toBe(
      [
        '#EXTM3U',
        '#EXT-X-VERSION:7',
        '#EXT-X-TARGETDURATION:3',
        '#EXT-X-PLAYLIST-TYPE:VOD',
        '#EXT-X-MEDIA-SEQUENCE:0',
        '#EXTINF:2.000000,',
        '#EXT-X-BYTERANGE:1000@0',
        FILE,
        '#EXTINF:2.500000,',
        '#EXT-X-BYTERANGE:500@1000',
        FILE,
        '#EXTINF:0.480000,',
        '#EXT-X-BYTERANGE:300@1500',
        FILE,
        '#EXT-X-ENDLIST',
        '',
      ].join('\n'),
    );
    const manifest = parsed(text);
    expect(manifest.endList).toBe(true);
    expect(manifest.segments.map((s) => [s.byterange, s.duration])).toEqual([
      [{ length: 1000, offset: 0 }, 2],
      [{ length: 500, offset: 1000 }, 2.5],
      [{ length: 300, offset: 1500 }, 0.48],
    ]);
  });

  it('makes an initialization section the EXT-X-MAP of the segments after it', () => {
    const manifest = parsed(
      storedPlaylist({ durationSeconds: 4, parts: [{ length: 800 }, { length: 1000, seconds: 2 }, { length: 900, seconds: 2 }] }, FILE),
    );
    expect(manifest.segments.map((s) => [s.map, s.byterange])).toEqual([
      [
        { uri: FILE, byterange: { length: 800, offset: 0 } },
        { length: 1000, offset: 800 },
      ],
      [
        { uri: FILE, byterange: { length: 800, offset: 0 } },
        { length: 900, offset: 1800 },
      ],
    ]);
  });
});
