import { describe, expect, it } from 'vitest';
import { bestVariant, parseHlsPlaylist, refuseSite, StreamRefusal } from '../../../src/engine/streams/hls-playlist';

const BASE = 'https://cdn.example/show/master.m3u8';

describe('parseHlsPlaylist', () => {
  it('groups redundant variants (same bandwidth, resolution, codecs) into one with several URIs', () => {
    const playlist = parseHlsPlaylist(
      [
        '#EXTM3U',
        '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2"',
        'low/index.m3u8',
        '#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"',
        'https://a.example/hi/index.m3u8',
        '#EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"',
        'https://b.example/hi/index.m3u8',
        '',
      ].join('\n'),
      BASE,
    );
    expect(playlist.kind).toBe('master');
    if (playlist.kind !== 'master') return;
    expect(playlist.variants).toHaveLength(2);
    expect(playlist.variants[0]!.uris).toEqual(['https://cdn.example/show/low/index.m3u8']);
    const best = bestVariant(playlist.variants)!;
    expect(best.uris).toEqual(['https://a.example/hi/index.m3u8', 'https://b.example/hi/index.m3u8']);
    expect(best.resolution).toEqual({ width: 1280, height: 720 });
    expect(best.separateAudio).toBe(false);
  });

  it('marks a variant whose sound is in its own playlist', () => {
    const playlist = parseHlsPlaylist(
      [
        '#EXTM3U',
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="en",DEFAULT=YES,URI="audio/en.m3u8"',
        '#EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="aud"',
        'video.m3u8',
      ].join('\n'),
      BASE,
    );
    expect(playlist.kind === 'master' && playlist.variants[0]!.separateAudio).toBe(true);
  });

  it('reads segments with absolute URIs, byte ranges, the init section, and an IV from the sequence number when none is given', () => {
    const playlist = parseHlsPlaylist(
      [
        '#EXTM3U',
        '#EXT-X-TARGETDURATION:4',
        '#EXT-X-MEDIA-SEQUENCE:7',
        '#EXT-X-MAP:URI="init.mp4"',
        '#EXT-X-KEY:METHOD=AES-128,URI="/keys/k1"',
        '#EXTINF:4.0,',
        '#EXT-X-BYTERANGE:1000@0',
        'all.m4s',
        '#EXTINF:3.5,',
        '#EXT-X-BYTERANGE:500',
        'all.m4s',
        '#EXT-X-KEY:METHOD=AES-128,URI="k2",IV=0x000102030405060708090A0B0C0D0E0F',
        '#EXTINF:2.5,',
        'last.m4s',
        '#EXT-X-ENDLIST',
      ].join('\n'),
      'https://cdn.example/show/v1/index.m3u8',
    );
    expect(playlist.kind).toBe('media');
    if (playlist.kind !== 'media') return;
    expect(playlist.live).toBe(false);
    expect(playlist.durationSeconds).toBe(10);
    expect(playlist.targetSeconds).toBe(4);
    expect(playlist.segments.map((segment) => segment.sequence)).toEqual([7, 8, 9]);
    const [first, second, third] = playlist.segments;
    expect(first).toMatchObject({
      uri: 'https://cdn.example/show/v1/all.m4s',
      byterange: { offset: 0, length: 1000 },
      key: { uri: 'https://cdn.example/keys/k1', iv: '00000000000000000000000000000007' },
      map: { uri: 'https://cdn.example/show/v1/init.mp4' },
    });
    expect(second).toMatchObject({ byterange: { offset: 1000, length: 500 }, key: { iv: '00000000000000000000000000000008' } });
    expect(third!.key).toEqual({ uri: 'https://cdn.example/show/v1/k2', iv: '000102030405060708090a0b0c0d0e0f' });
  });

  it('says a playlist without an end is live', () => {
    const playlist = parseHlsPlaylist('#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n', BASE);
    expect(playlist.kind === 'media' && playlist.live).toBe(true);
  });

  it('refuses DRM (SAMPLE-AES, FairPlay, Widevine) and what is not a playlist', () => {
    const sampleAes = '#EXTM3U\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI="k"\n#EXTINF:2,\na.ts\n#EXT-X-ENDLIST\n';
    expect(() => parseHlsPlaylist(sampleAes, BASE)).toThrow(/SAMPLE-AES, a DRM scheme/);
    const fairPlay = '#EXTM3U\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://x",KEYFORMAT="com.apple.streamingkeydelivery"\n#EXTINF:2,\na.ts\n';
    expect(() => parseHlsPlaylist(fairPlay, BASE)).toThrow(/protected by DRM/);
    expect(() => parseHlsPlaylist('<html>', BASE)).toThrow(StreamRefusal);
  });
});

describe('refuseSite', () => {
  it("refuses YouTube's streams by the playlist's host or the page's, and no other site", () => {
    expect(() => refuseSite('https://rr3---sn-abc.googlevideo.com/videoplayback/x.m3u8')).toThrow(/forbids downloading/);
    expect(() => refuseSite('https://cdn.example/x.m3u8', 'https://www.youtube.com/watch?v=1')).toThrow(StreamRefusal);
    expect(() => refuseSite('https://notyoutube.com/x.m3u8', 'https://video.example/page', undefined)).not.toThrow();
  });
});
