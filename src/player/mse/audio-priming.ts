import { children, type Box } from '../../engine/streams/mp4-boxes';

/**
 * Audio edit lists that trim the encoder's priming, left out of a remuxed MP4's init segment.
 *
 * ffmpeg's AAC track starts with 1024 samples of encoder delay (23 ms at 44.1 kHz) and an edit
 * list that starts the track after them (elst media_time). Given that edit list in the init
 * segment, Firefox's Media Source buffered the video-and-audio clip of ffmpeg's defaults only from
 * 0 to the end of the first fragment, then from the next video keyframe on: 0–1 s, then 10–120 s,
 * so playback stopped after a second (checked 2026-11-28 with fragments of 25 samples; of 50:
 * 0–2.12 s). Without it every second was buffered. The priming then plays: the sound starts
 * 23 ms late, below what anyone hears as out of sync.
 */

/** Longest priming whose edit list is left out (HE-AAC: 2112 samples at 48 kHz, 44 ms); a longer shift cuts content. */
export const MAX_PRIMING_SECONDS = 0.05;

/** `init` without the edit lists of `audioTracks` that only skip their priming (at most MAX_PRIMING_SECONDS). */
export function withoutPriming(init: Uint8Array, audioTracks: readonly { id: number; timescale: number }[]): Uint8Array {
  const shifts = editShifts(init);
  const primed = audioTracks.filter((t) => (shifts.get(t.id) ?? Infinity) / t.timescale <= MAX_PRIMING_SECONDS).map((t) => t.id);
  return primed.length === 0 ? init : withoutEdits(init, primed);
}

/** Track id → the media time (in the track's timescale) its edit list starts at: only edit lists that are one plain shift. */
function editShifts(init: Uint8Array): Map<number, number> {
  const view = viewOf(init);
  const shifts = new Map<number, number>();
  for (const trak of traks(init)) {
    const elst = childrenOf(init, trak, 'edts').flatMap((edts) => childrenOf(init, edts, 'elst'))[0];
    const id = trackId(init, trak);
    if (id === undefined || !elst) continue;
    const v1 = init[elst.data] === 1;
    if (view.getUint32(elst.data + 4) !== 1) continue; // an empty edit first, or several: not a plain shift
    const entry = elst.data + 8;
    const mediaTime = v1 ? Number(view.getBigInt64(entry + 8)) : view.getInt32(entry + 4);
    const rate = view.getInt16(entry + (v1 ? 16 : 8));
    if (mediaTime > 0 && rate === 1) shifts.set(id, mediaTime);
  }
  return shifts;
}

/** A copy of `init` whose tracks in `trackIds` have no edit list (their edts becomes a free box of the same size). */
function withoutEdits(init: Uint8Array, trackIds: Iterable<number>): Uint8Array {
  const ids = new Set(trackIds);
  const out = init.slice();
  for (const trak of traks(out)) {
    const id = trackId(out, trak);
    if (id === undefined || !ids.has(id)) continue;
    for (const edts of childrenOf(out, trak, 'edts')) out.set(FREE, edts.start + 4);
  }
  return out;
}

const FREE = [0x66, 0x72, 0x65, 0x65];

function traks(init: Uint8Array): Box[] {
  const moov = children(init, 0, init.length).find((b) => b.type === 'moov');
  return moov ? childrenOf(init, moov, 'trak') : [];
}

/** tkhd's track_ID (after version 1's 64-bit times, or version 0's 32-bit ones). */
function trackId(init: Uint8Array, trak: Box): number | undefined {
  const tkhd = childrenOf(init, trak, 'tkhd')[0];
  return tkhd && viewOf(init).getUint32(tkhd.data + (init[tkhd.data] === 1 ? 20 : 12));
}

function childrenOf(bytes: Uint8Array, parent: Box, type: string): Box[] {
  return children(bytes, parent.data, parent.end).filter((b) => b.type === type);
}

function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
