import { describe, expect, it } from 'vitest';
import {
  checkPlaylistSize,
  MAX_BYTES_PER_SECOND,
  MAX_PLAYLIST_LINES,
  MAX_SEGMENTS,
  MIN_PART_BOUND,
  partBound,
  partSizeRefusal,
  shown,
  uriRefusal,
} from '../../../src/engine/streams/stream-bounds';
import { checkMediaPlaylist, usableVariants } from '../../../src/engine/streams/hls-trust';
import { parseHlsPlaylist, type HlsSegment, type HlsVariant } from '../../../src/engine/streams/hls-playlist';

const PUBLIC = 'https://cdn.example/show/index.m3u8';

describe('the bounds of an HLS playlist', () => {
  it('counts URI lines before parsing: 30,000 pass, one more does not', () => {
    const playlist = (n: number) => `#EXTM3U\n${'#EXTINF:1,\n  a.ts\r\n\n'.repeat(n)}`;
    expect(() => checkPlaylistSize(playlist(MAX_SEGMENTS), PUBLIC)).not.toThrow();
    expect(() => checkPlaylistSize(playlist(MAX_SEGMENTS + 1), PUBLIC)).toThrow(
      `the playlist ${PUBLIC} has more than 30000 segments, the most Stitch reads in one playlist`,
    );
  });

  it('counts tag lines too (each costs the parser memory)', () => {
    const tags = `#EXTM3U\n${'#EXT-X-DISCONTINUITY\n'.repeat(MAX_PLAYLIST_LINES)}`;
    expect(() => checkPlaylistSize(tags, PUBLIC)).toThrow('more than 240000 lines');
  });

  it('refuses more than 256 variant entries in a master playlist', () => {
    const master = (n: number) => `#EXTM3U\n${'#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n'.repeat(n)}`;
    expect(parseHlsPlaylist(master(256), PUBLIC).kind).toBe('master');
    expect(() => parseHlsPlaylist(master(257), PUBLIC)).toThrow('lists 257 variants and hosts, more than the 256 Stitch reads');
  });

  it('refuses byte ranges that are not safe integers and durations that are not numbers', () => {
    const ranged = '#EXTM3U\n#EXT-X-BYTERANGE:99999999999999999999@0\n#EXTINF:2,\na.ts\n#EXT-X-ENDLIST\n';
    expect(() => parseHlsPlaylist(ranged, PUBLIC)).toThrow('segment 1 of https://cdn.example/show/index.m3u8 has a byte range');
    const endless = '#EXTM3U\n#EXTINF:forever,\na.ts\n#EXT-X-ENDLIST\n';
    expect(() => parseHlsPlaylist(endless, PUBLIC)).toThrow('has no valid duration');
  });

  it('bounds a part by its duration at 1 Gbit/s, and any part at 32 MiB', () => {
    expect(partBound(undefined)).toBe(MIN_PART_BOUND);
    expect(partBound(0.01)).toBe(MIN_PART_BOUND);
    expect(partBound(2)).toBe(2 * MAX_BYTES_PER_SECOND);
    expect(partSizeRefusal('segment 1', 2 * MAX_BYTES_PER_SECOND, 2)).toBeUndefined();
    expect(partSizeRefusal('segment 1', 1e15, 2)).toBe(
      'segment 1 has 1000000000000000 bytes, more than a 2 s segment can have (250 MB, at 1 Gbit/s): the playlist or the server is wrong',
    );
    expect(partSizeRefusal('init', MIN_PART_BOUND + 1, undefined)).toContain('more than an initialization section can have');
  });

  it('cuts long URIs in messages', () => {
    const long = `https://cdn.example/${'a'.repeat(10_000)}`;
    expect(shown(long)).toHaveLength(160);
    expect(shown(PUBLIC)).toBe(PUBLIC);
    expect(uriRefusal(`http://10.0.0.1/${'b'.repeat(10_000)}`, PUBLIC)!.length).toBeLessThan(300);
  });
});

describe('the trust rules on what a playlist names', () => {
  const variant = (uris: string[], renditions?: string[]): HlsVariant => ({
    uris,
    separateAudio: false,
    ...(renditions ? { renditions } : {}),
  });

  it('drops refused hosts and variants with one note, and fails when none is left', () => {
    const notes: string[] = [];
    const usable = usableVariants(
      [
        variant(['http://192.168.1.1/a.m3u8']),
        variant(['https://cdn.example/b.m3u8', 'http://cdn.example/b.m3u8']),
        variant(['https://cdn.example/c.m3u8'], ['http://127.0.0.1/subs.m3u8']),
      ],
      PUBLIC,
      notes,
    );
    expect(usable.map((v) => v.uris)).toEqual([['https://cdn.example/b.m3u8']]);
    expect(notes).toEqual([
      `left out what ${PUBLIC} names that may not be requested: http://192.168.1.1/a.m3u8 is on a local or private network address, and the download is not (and 2 more)`,
    ]);
    expect(() => usableVariants([variant(['http://10.0.0.1/a.m3u8'])], PUBLIC, [])).toThrow('no variant is left to download');
  });

  it('lets a local playlist name local URIs', () => {
    expect(usableVariants([variant(['http://192.168.1.1/a.m3u8'])], 'http://192.168.1.2/m.m3u8', [])).toHaveLength(1);
  });

  it('refuses a media playlist naming a refused segment, key or map, or more than 2,000 keys', () => {
    const segment = (more: Partial<HlsSegment>): HlsSegment => ({ uri: 'https://cdn.example/s.ts', duration: 2, sequence: 0, ...more });
    expect(() => checkMediaPlaylist([segment({ map: { uri: 'http://169.254.169.254/x' } })], PUBLIC, PUBLIC)).toThrow(
      `the initialization section of segment 1 in ${PUBLIC} is refused: http://169.254.169.254/x is on a local`,
    );
    expect(() => checkMediaPlaylist([segment({ key: { uri: 'http://cdn.example/k', iv: '0' } })], PUBLIC, PUBLIC)).toThrow(
      'http://cdn.example/k is plain http and the download is https',
    );
    const keyed = (n: number) => Array.from({ length: n }, (_, i) => segment({ key: { uri: `https://cdn.example/k${i}`, iv: '0' } }));
    expect(() => checkMediaPlaylist(keyed(2_000), PUBLIC, PUBLIC)).not.toThrow();
    expect(() => checkMediaPlaylist(keyed(2_001), PUBLIC, PUBLIC)).toThrow('names 2001 keys, more than the 2000');
  });
});
