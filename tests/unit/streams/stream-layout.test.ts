import { describe, expect, it } from 'vitest';
import {
  parseStreamLayout,
  partOffsets,
  piecesOf,
  streamStem,
  timelineOf,
  type StreamLayout,
} from '../../../src/engine/streams/stream-layout';

const layout: StreamLayout = {
  kind: 'hls',
  playlist: 'https://cdn.example/master.m3u8',
  filename: 'master.ts',
  contentType: 'video/mp2t',
  durationSeconds: 6,
  parts: [
    { length: 100, sourceOffset: 0, sourceLength: 100 },
    { length: 50, sourceOffset: 0, sourceLength: 64, key: { index: 0, iv: '00000000000000000000000000000001' } },
    { length: 30, sourceOffset: 200, sourceLength: 30 },
  ],
  sources: [{ url: 'https://cdn.example/v.m3u8', uris: ['a.ts', 'b.ts', 'c.ts'] }],
  keys: ['000102030405060708090a0b0c0d0e0f'],
};

describe('the stream layout', () => {
  it("names the file after the playlist's or manifest's last path segment, less its extension", () => {
    expect(streamStem('https://cdn.example/show/index.m3u8?token=1')).toBe('index');
    expect(streamStem('https://cdn.example/film/Manifest.MPD')).toBe('Manifest');
    expect(streamStem('https://cdn.example/live/chunklist.m3u')).toBe('chunklist');
    expect(streamStem('https://cdn.example/')).toBe('stream');
  });

  it('places parts end to end by their plaintext length', () => {
    expect(partOffsets(layout)).toEqual([0, 100, 150, 180]);
  });

  it('maps a range of the file onto the pieces of the parts it covers', () => {
    const offsets = partOffsets(layout);
    expect(piecesOf(offsets, 0, 180)).toEqual([
      { index: 0, start: 0, end: 100 },
      { index: 1, start: 0, end: 50 },
      { index: 2, start: 0, end: 30 },
    ]);
    expect(piecesOf(offsets, 120, 160)).toEqual([
      { index: 1, start: 20, end: 50 },
      { index: 2, start: 0, end: 10 },
    ]);
    expect(piecesOf(offsets, 100, 101)).toEqual([{ index: 1, start: 0, end: 1 }]);
    expect(piecesOf(offsets, 99, 100)).toEqual([{ index: 0, start: 99, end: 100 }]);
    expect(piecesOf(offsets, 179, 180)).toEqual([{ index: 2, start: 29, end: 30 }]);
  });

  it('accepts a stored layout it wrote, and refuses a damaged one', () => {
    const stored: unknown = JSON.parse(JSON.stringify(layout));
    expect(parseStreamLayout(stored)).toEqual(layout);
    expect(parseStreamLayout({ ...layout, sources: [{ url: 'x', uris: ['a.ts'] }] })).toBeUndefined();
    expect(parseStreamLayout({ ...layout, keys: ['short'] })).toBeUndefined();
    expect(parseStreamLayout({ ...layout, parts: [{ length: -1, sourceOffset: 0, sourceLength: 0 }] })).toBeUndefined();
    expect(parseStreamLayout({ ...layout, kind: 'smooth' })).toBeUndefined();
    expect(parseStreamLayout({ ...layout, parts: [{ length: 1, sourceOffset: 0, sourceLength: 1, seconds: -2 }] })).toBeUndefined();
  });

  it("gives the player each part's length and a segment's duration; none for a layout stored without durations", () => {
    const timed: StreamLayout = {
      ...layout,
      parts: [{ length: 700, sourceOffset: 0, sourceLength: 700 }, ...layout.parts.map((part) => ({ ...part, seconds: 2 }))],
      sources: [{ url: 'https://cdn.example/v.m3u8', uris: ['init.mp4', 'a.m4s', 'b.m4s', 'c.m4s'] }],
    };
    expect(parseStreamLayout(JSON.parse(JSON.stringify(timed)))).toEqual(timed);
    expect(timelineOf(timed)).toEqual({
      durationSeconds: 6,
      parts: [{ length: 700 }, { length: 100, seconds: 2 }, { length: 50, seconds: 2 }, { length: 30, seconds: 2 }],
    });
    expect(timelineOf(layout)).toBeUndefined();
  });
});
