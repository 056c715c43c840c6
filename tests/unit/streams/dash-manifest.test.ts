import { describe, expect, it, vi } from 'vitest';
import { isDashText, looksLikeDashManifest, parseDashManifest } from '../../../src/engine/streams/dash-manifest';
import { StreamRefusal } from '../../../src/engine/streams/hls-playlist';

const URL_ = 'https://cdn.example/show/manifest.mpd';

/** An MPD as ffmpeg's dash muxer writes one (trimmed): two pictures and a sound, SegmentTemplate with a timeline. */
function mpd({ type = 'static', protect = false, sound = true } = {}): string {
  const template = (timescale: number, d: number) =>
    `<SegmentTemplate timescale="${timescale}" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1"><SegmentTimeline><S t="0" d="${d}" r="1" /></SegmentTimeline></SegmentTemplate>`;
  return `<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="${type}" mediaPresentationDuration="PT12.0S" minBufferTime="PT12.0S"${type === 'dynamic' ? ' availabilityStartTime="2026-01-01T00:00:00Z"' : ''}>
  <Period id="0" start="PT0.0S">
    <AdaptationSet id="0" contentType="video">
      ${protect ? '<ContentProtection schemeIdUri="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"/>' : ''}
      <Representation id="0" mimeType="video/mp4" codecs="avc1.64000d" bandwidth="150000" width="320" height="180">${template(12800, 76800)}</Representation>
    </AdaptationSet>
    <AdaptationSet id="1" contentType="video">
      <Representation id="1" mimeType="video/mp4" codecs="avc1.64001e" bandwidth="500000" width="640" height="360">${template(12800, 76800)}</Representation>
    </AdaptationSet>
    ${sound ? `<AdaptationSet id="2" contentType="audio"><Representation id="2" mimeType="audio/mp4" codecs="mp4a.40.2" bandwidth="69000" audioSamplingRate="48000">${template(48000, 288000)}</Representation></AdaptationSet>` : ''}
  </Period>
</MPD>`;
}

describe('a DASH manifest', () => {
  it('lists the pictures best first and the sound, each with its initialization and segments', () => {
    const manifest = parseDashManifest(mpd(), URL_);
    expect(manifest.durationSeconds).toBe(12);
    expect(manifest.pictures.map((p) => [p.variant.resolution, p.variant.bandwidth])).toEqual([
      [{ width: 640, height: 360 }, 500000],
      [{ width: 320, height: 180 }, 150000],
    ]);
    const [best] = manifest.pictures;
    expect(best!.init).toEqual({ uri: 'https://cdn.example/show/init-stream1.m4s' });
    expect(best!.segments).toEqual([
      { uri: 'https://cdn.example/show/chunk-stream1-00001.m4s', duration: 6 },
      { uri: 'https://cdn.example/show/chunk-stream1-00002.m4s', duration: 6 },
    ]);
    expect(manifest.sounds).toHaveLength(1);
    expect(manifest.sounds[0]!.init.uri).toBe('https://cdn.example/show/init-stream2.m4s');
  });

  it('has no picture when it is sound alone', () => {
    const soundOnly = mpd({ sound: true }).replace(/<AdaptationSet id="[01]" contentType="video">[\s\S]*?<\/AdaptationSet>/g, '');
    const manifest = parseDashManifest(soundOnly, URL_);
    expect(manifest.pictures).toEqual([]);
    expect(manifest.sounds[0]!.variant.codecs).toBe('mp4a.40.2');
  });

  it('refuses DRM, a live (dynamic) manifest, and text that is no manifest, with the reason as data', () => {
    const reason = (text: string) => {
      try {
        parseDashManifest(text, URL_);
      } catch (error) {
        return error instanceof StreamRefusal ? error.reason : String(error);
      }
      return 'accepted';
    };
    expect(reason(mpd({ protect: true }))).toBe('drm');
    expect(reason(mpd({ type: 'dynamic' }))).toBe('live-dash');
    expect(reason('<html><body>not found</body></html>')).toBe('not-a-playlist');
  });

  it('is told from an HLS playlist by its text, and noticed by its type or its name', () => {
    expect(isDashText(mpd())).toBe(true);
    expect(isDashText('<MPD xmlns="urn:mpeg:dash:schema:mpd:2011">')).toBe(true);
    expect(isDashText('#EXTM3U\n#EXT-X-VERSION:3\n')).toBe(false);
    expect(looksLikeDashManifest('https://cdn.example/a/manifest.mpd?token=1', undefined)).toBe(true);
    expect(looksLikeDashManifest('https://cdn.example/a/play', 'application/dash+xml; charset=utf-8')).toBe(true);
    expect(looksLikeDashManifest('https://cdn.example/a/index.m3u8', 'application/vnd.apple.mpegurl')).toBe(false);
  });

  it('refuses, before any request, a source the door would refuse: local from a public manifest, plain http from an https one', () => {
    const based = (base: string) =>
      mpd().replace('<Period id="0" start="PT0.0S">', `<Period id="0" start="PT0.0S"><BaseURL>${base}</BaseURL>`);
    const refusal = (text: string, url: string) => {
      try {
        parseDashManifest(text, url);
        return 'accepted';
      } catch (error) {
        expect(error).toBeInstanceOf(StreamRefusal);
        expect((error as StreamRefusal).reason).toBe('unsafe-source');
        return (error as Error).message;
      }
    };
    expect(refusal(based('http://192.168.1.1/'), URL_)).toBe(
      `the DASH manifest ${URL_} names a source Stitch does not request: http://192.168.1.1/init-stream1.m4s is on a local or private network address, and the download is not`,
    );
    expect(refusal(based('http://cdn.example/show/'), URL_)).toContain(
      'http://cdn.example/show/init-stream1.m4s is plain http and the download is https',
    );
    expect(refusal(based('https://other.example/'), URL_)).toBe('accepted');
    expect(refusal(based('http://10.0.0.2/'), 'http://192.168.1.5/manifest.mpd')).toBe('accepted');
  });

  it('does not let the XML parser print its warnings about a broken manifest', () => {
    const warn = vi.spyOn(console, 'warn');
    const error = vi.spyOn(console, 'error');
    expect(() => parseDashManifest(mpd().replace('<Period', '<Period a=1 b=2'), URL_)).not.toThrow();
    expect([warn.mock.calls, error.mock.calls]).toEqual([[], []]);
    warn.mockRestore();
    error.mockRestore();
  });
});
