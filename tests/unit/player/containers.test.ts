import { describe, expect, it } from 'vitest';
import { fixture, reader } from './stored-fixture';
import { readElementHeader, readUint } from '../../../src/player/mse/ebml';
import { readBoxHeader } from '../../../src/engine/streams/mp4-boxes';
import { openFragmentedMp4 } from '../../../src/player/mse/mp4';
import { Unsupported, unsupportedText, type MediaSegments, type StoredReader } from '../../../src/player/mse/segments';
import { speak } from '../pages/fixtures';
import { openWebm } from '../../../src/player/mse/webm';

/** All media segments in order from the first. */
/** Every segment from the first; `verbatim`: each is the file's own bytes (WebM Clusters), not rewritten. */
async function allSegments(segments: MediaSegments, verbatim = true): Promise<{ offset: number; bytes: Uint8Array; next: number }[]> {
  const out: { offset: number; bytes: Uint8Array; next: number }[] = [];
  for (let offset = segments.firstSegment; ;) {
    const segment = await segments.segmentAt(offset);
    if (!segment) return out;
    out.push({ offset, ...segment });
    if (verbatim) expect(segment.next).toBe(offset + segment.bytes.length);
    offset = segment.next;
  }
}

const concat = (a: Uint8Array, b: Uint8Array) => new Uint8Array([...a, ...b]);

const CLUSTER = 0x1f43b675;
const CLUSTER_TIMECODE = 0xe7;

/** A Cluster's timecode in seconds (timecode scale 1 ms, as ffmpeg writes). */
function clusterSeconds(cluster: Uint8Array): number {
  const header = readElementHeader(cluster, 0)!;
  const timecode = readElementHeader(cluster, header.headerLength)!;
  expect(timecode.id).toBe(CLUSTER_TIMECODE);
  return readUint(cluster, header.headerLength + timecode.headerLength, timecode.size) / 1000;
}

describe('WebM for Media Source', () => {
  it('splits a file into its head (init segment) and whole Clusters, in order', async () => {
    const bytes = fixture('short.webm');
    const webm = await openWebm(reader(bytes));
    expect(webm.mime).toBe('video/webm; codecs="vp9,opus"');
    expect(webm.durationSeconds).toBeCloseTo(4, 1);
    expect(webm.init).toEqual(bytes.subarray(0, webm.firstSegment));
    const clusters = await allSegments(webm);
    expect(clusters.length).toBeGreaterThan(1);
    expect(clusters[0]!.offset).toBe(webm.firstSegment);
    for (const c of clusters) expect(readElementHeader(c.bytes, 0)!.id).toBe(CLUSTER);
    const times = clusters.map((c) => clusterSeconds(c.bytes));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Init + clusters are the file up to what follows the last Cluster (Cues, Tags).
    const last = clusters[clusters.length - 1]!;
    expect(last.offset + last.bytes.length).toBeLessThanOrEqual(bytes.length);
  });

  it('finds the Cluster to start from for a seek in the Cues at the end of the file', async () => {
    const bytes = fixture('progressive.webm');
    const r = reader(bytes);
    const webm = await openWebm(r);
    expect(webm.mime).toBe('video/webm; codecs="vp8,opus"');
    expect(webm.durationSeconds).toBeCloseTo(40, 0);
    // Opening reads only the head, not the 8 MB, nor 64 KiB that a low-bitrate file takes seconds to bring.
    expect(webm.firstSegment).toBeLessThan(4096);
    expect(Math.max(...r.reads.map(([, end]) => end))).toBeLessThanOrEqual(4096);
    const target = 32.5;
    const offset = (await webm.offsetFor(target))!;
    const cluster = (await webm.segmentAt(offset))!;
    const seconds = clusterSeconds(cluster.bytes);
    // The keyframe every 2 s: the Cluster at 32 s (at or just before the target).
    expect(seconds).toBeLessThanOrEqual(target);
    expect(seconds).toBeGreaterThan(target - 2.1);
    expect(offset / bytes.length).toBeGreaterThan(0.7);
  });

  it('hands out a Cluster in pieces cut between its blocks as they are stored, which make up the whole Cluster', async () => {
    const bytes = fixture('short.webm');
    const whole = await openWebm(reader(bytes));
    const first = (await whole.segmentAt(whole.firstSegment))!;
    let storedTo = bytes.length;
    const partial: StoredReader = {
      size: bytes.length,
      read: async (start, end) => {
        while (storedTo < Math.min(end, bytes.length)) await new Promise((r) => setTimeout(r, 1));
        return bytes.slice(start, end);
      },
      readAvailable: async (start, end) => bytes.slice(start, Math.min(end, storedTo)),
    };
    const webm = await openWebm(partial);
    // Stored: the head and the first Cluster up to its middle; the rest of it comes later.
    storedTo = webm.firstSegment + Math.floor(first.bytes.length / 2);
    const piece = (await webm.segmentAt(webm.firstSegment))!;
    expect(piece.next).toBeLessThanOrEqual(storedTo);
    expect(piece.next).toBeGreaterThan(webm.firstSegment + 1024);
    expect(piece.bytes).toEqual(bytes.subarray(webm.firstSegment, piece.next));
    // It ends between two of the Cluster's elements: the rest starts with a whole block.
    const rest = readElementHeader(bytes, piece.next)!;
    expect([0xa3, 0xa0]).toContain(rest.id);
    // Seeking without an index, appending starts again from the Cluster's start.
    expect(webm.restartAt?.(piece.next)).toBe(webm.firstSegment);
    storedTo = bytes.length;
    const next = (await webm.segmentAt(piece.next))!;
    expect(next.next).toBe(first.next);
    expect(concat(piece.bytes, next.bytes)).toEqual(first.bytes);
    // And the Cluster after it comes whole, from its header.
    expect(readElementHeader((await webm.segmentAt(next.next))!.bytes, 0)!.id).toBe(CLUSTER);
  });

  it('refuses codecs Media Source does not take in WebM (e.g. Matroska with H.264)', async () => {
    const bytes = fixture('short.webm');
    const at = Buffer.from(bytes).indexOf('V_VP9');
    bytes.set(new TextEncoder().encode('V_AVC'), at);
    await expect(openWebm(reader(bytes))).rejects.toThrow(Unsupported);
    await expect(openWebm(reader(bytes))).rejects.toThrow(/V_AVC/);
    const refusal = (await openWebm(reader(bytes)).catch((error: unknown) => error)) as Unsupported;
    expect(refusal).toMatchObject({ kind: 'codec', what: 'V_AVC' });
    expect(unsupportedText(refusal)).toBe('it uses V_AVC, which this browser cannot play while it downloads');
    speak('de');
    expect(unsupportedText(refusal)).toBe('sie nutzt V_AVC, das dieser Browser nicht während des Downloads abspielen kann');
    delete (globalThis as { chrome?: unknown }).chrome;
  });
});

describe('fragmented MP4 for Media Source', () => {
  it('splits ftyp + moov (init) from moof + mdat fragments, names the codecs and the duration', async () => {
    const bytes = fixture('fragmented.mp4');
    const mp4 = await openFragmentedMp4(reader(bytes));
    expect(mp4.mime).toMatch(/^video\/mp4; codecs="avc1\.4d[0-9a-f]{4},mp4a\.40\.2"$/);
    expect(mp4.durationSeconds).toBeGreaterThan(3.5);
    expect(mp4.durationSeconds).toBeLessThan(4.5);
    expect(readBoxHeader(mp4.init, 0)!.type).toBe('ftyp');
    const fragments = await allSegments(mp4, false);
    expect(fragments.length).toBeGreaterThan(1);
    for (const f of fragments) {
      expect(readBoxHeader(f.bytes, 0)!.type).toBe('moof');
      const moof = readBoxHeader(f.bytes, 0)!;
      expect(readBoxHeader(f.bytes, moof.end)!.type).toBe('mdat');
    }
    // After the last fragment: the mfra index.
    expect(readBoxHeader(bytes, fragments.at(-1)!.next)!.type).toBe('mfra');
  });

  it('seeks through the mfra index to a fragment at or before the time', async () => {
    const bytes = fixture('fragmented.mp4');
    const mp4 = await openFragmentedMp4(reader(bytes));
    const fragments = (await allSegments(mp4, false)).map((f) => f.offset);
    const start = (await mp4.offsetFor(0))!;
    const later = (await mp4.offsetFor(2.5))!;
    expect(fragments).toContain(start);
    expect(fragments).toContain(later);
    expect(start).toBe(fragments[0]);
    expect(later).toBeGreaterThan(start);
  });

  it('refuses a plain MP4 (not fragmented) and one whose moov comes after the media', async () => {
    const box = (type: string, ...payload: Uint8Array[]) => {
      const length = 8 + payload.reduce((n, p) => n + p.length, 0);
      const out = new Uint8Array(length);
      new DataView(out.buffer).setUint32(0, length);
      out.set(new TextEncoder().encode(type), 4);
      let at = 8;
      for (const p of payload) out.set(p, (at += p.length) - p.length);
      return out;
    };
    const mvhd = box('mvhd', new Uint8Array(100));
    new DataView(mvhd.buffer).setUint32(8 + 12, 1000);
    const concat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
    const plain = concat(box('ftyp', new TextEncoder().encode('isom')), box('moov', mvhd), box('mdat', new Uint8Array(64)));
    await expect(openFragmentedMp4(reader(plain))).rejects.toThrow(/not fragmented/);
    const moovLast = concat(box('ftyp', new TextEncoder().encode('isom')), box('mdat', new Uint8Array(64)), box('moov', mvhd));
    await expect(openFragmentedMp4(reader(moovLast))).rejects.toThrow(/after the media/);
  });
});
