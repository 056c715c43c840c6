import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clip, MP4_SHORT } from '../../support/clips';
import { reader } from './stored-fixture';
import { children, type Box } from '../../../src/engine/streams/mp4-boxes';
import { withoutPriming } from '../../../src/player/mse/audio-priming';
import { openPlainMp4 } from '../../../src/player/mse/plain-mp4';

const inside = (bytes: Uint8Array, box: Box, type: string) => children(bytes, box.data, box.end).filter((b) => b.type === type);

/** Each trak of an init segment: its handler ('vide', 'soun'), its box, and the media time of its edit list, if it has one. */
function traks(init: Uint8Array): { handler: string; trak: Box; mediaTime?: number }[] {
  const view = new DataView(init.buffer, init.byteOffset, init.byteLength);
  const moov = children(init, 0, init.length).find((b) => b.type === 'moov')!;
  return inside(init, moov, 'trak').map((trak) => {
    const hdlr = inside(init, inside(init, trak, 'mdia')[0]!, 'hdlr')[0]!;
    const handler = String.fromCharCode(...init.subarray(hdlr.data + 8, hdlr.data + 12));
    const elst = inside(init, trak, 'edts').flatMap((edts) => inside(init, edts, 'elst'))[0];
    if (!elst) return { handler, trak };
    const v1 = init[elst.data] === 1;
    return { handler, trak, mediaTime: v1 ? Number(view.getBigInt64(elst.data + 16)) : view.getInt32(elst.data + 12) };
  });
}

const edits = (init: Uint8Array) => traks(init).map(({ handler, mediaTime }) => ({ handler, mediaTime }));

describe("a remuxed MP4's audio priming (ffmpeg's AAC: 1024 samples behind an edit list)", () => {
  it("leaves the audio's edit list out of the init segment and keeps the video's", async () => {
    const media = await clip(MP4_SHORT);
    const source = await openPlainMp4(reader(new Uint8Array(readFileSync(media.path))));
    // x264's B-frames: the video's edit list starts 2 frames in (1024 at 12288/s); it stays.
    expect(edits(source.init)).toEqual([
      { handler: 'vide', mediaTime: 1024 },
      { handler: 'soun', mediaTime: undefined },
    ]);
  }, 60_000);

  it('keeps an audio edit list that skips more than a priming (it would cut the sound)', async () => {
    const media = await clip(MP4_SHORT);
    const source = await openPlainMp4(reader(new Uint8Array(readFileSync(media.path))));
    const withPriming = source.init.slice();
    // Put the audio's edit list back: the free box it became, with its elst inside, is an edts again.
    const audioTrak = traks(withPriming).find((t) => t.handler === 'soun')!.trak;
    const free = inside(withPriming, audioTrak, 'free')[0]!;
    withPriming.set([0x65, 0x64, 0x74, 0x73], free.start + 4); // 'edts'
    const audio = { id: 2, timescale: 44_100 };
    expect(edits(withPriming)[1]).toEqual({ handler: 'soun', mediaTime: 1024 });
    expect(edits(withoutPriming(withPriming, [audio]))[1]).toEqual({ handler: 'soun', mediaTime: undefined });
    // The same edit list 0.1 s long: content, not priming.
    const elst = inside(withPriming, free, 'elst')[0]!;
    new DataView(withPriming.buffer).setInt32(elst.data + 12, 4410);
    expect(edits(withoutPriming(withPriming, [audio]))[1]).toEqual({ handler: 'soun', mediaTime: 4410 });
  }, 60_000);
});
