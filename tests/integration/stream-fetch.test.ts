import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from '../../src/cli/node-fetch';
import { planHlsStream, type StreamLayout } from '../../src/engine';
import { realClock } from '../../src/engine/clock';
import { streamFetch } from '../../src/engine/streams/stream-fetch';
import { startStreamServer, type StreamServer } from '../support/stream-server';
import { AES, expectedBytes, FMP4, SINGLE_FILE, stream, TS_VARIANTS, type MadeStream } from '../support/streams';

// Issue 30: a stream's layout answers any range of the file from the segments, exactly as ffmpeg
// wrote them (decrypted where encrypted), whatever segment and AES block boundaries it crosses.
const servers: StreamServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function planned(recipe: typeof AES, playlist: string): Promise<{ made: MadeStream; layout: StreamLayout; server: StreamServer }> {
  const made = await stream(recipe);
  const server = await startStreamServer({ root: made.dir });
  servers.push(server);
  const { layout } = await planHlsStream(`${server.origin}/${playlist}`, { fetch: nodeFetch });
  return { made, layout, server };
}

async function read(layout: StreamLayout, start: number, end: number): Promise<{ status: number; range: string | null; bytes: Buffer }> {
  const response = await streamFetch(
    layout,
    nodeFetch,
    realClock,
  )(layout.sources[0]!.url, { headers: { Range: `bytes=${start}-${end - 1}` } });
  const chunks: Uint8Array[] = [];
  const reader = response.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value.slice());
  }
  return { status: response.status, range: response.headers.get('content-range'), bytes: Buffer.concat(chunks) };
}

/** Ranges at and around every kind of boundary, and a few anywhere (a fixed sequence: the same each run). */
function rangesOf(size: number): [number, number][] {
  const ranges: [number, number][] = [
    [0, size],
    [0, 1],
    [size - 1, size],
    [15, 17],
    [16, 32],
    [size - 20, size],
  ];
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20; i++) {
    const start = Math.floor(random() * (size - 1));
    ranges.push([start, Math.min(size, start + 1 + Math.floor(random() * 400_000))]);
  }
  return ranges;
}

describe('streamFetch', () => {
  beforeAll(async () => {
    for (const recipe of [AES, TS_VARIANTS, SINGLE_FILE, FMP4]) await stream(recipe);
  }, 180_000);

  it.each([
    ['AES-128 segments', AES, 'v0/index.m3u8', 0],
    ['plain segments of a master playlist', TS_VARIANTS, 'master.m3u8', 2],
    ['byte ranges of one file', SINGLE_FILE, 'v0/index.m3u8', 0],
  ])('answers any range of %s with the right bytes and Content-Range', async (_, recipe, playlist, variant) => {
    const { made, layout } = await planned(recipe, playlist);
    const expected = expectedBytes(made, variant);
    const size = layout.parts.reduce((sum, part) => sum + part.length, 0);
    expect(size).toBe(expected.length);
    for (const [start, end] of rangesOf(size)) {
      const { status, range, bytes } = await read(layout, start, end);
      expect(status).toBe(206);
      expect(range).toBe(`bytes ${start}-${end - 1}/${size}`);
      expect(bytes.equals(expected.subarray(start, end)), `bytes ${start}-${end - 1}`).toBe(true);
    }
  });

  it("asks for the next segment only as the current one's body ends: the two never share the server's rate", async () => {
    const { made, layout, server } = await planned(TS_VARIANTS, 'master.m3u8');
    const lengths = layout.parts.slice(0, 3).map((part) => part.length);
    // Each segment takes a few hundred ms at this rate; a round trip on loopback takes one.
    server.setRate(Math.round(Math.min(...lengths) / 0.3));
    const before = server.requests.length;
    const end = lengths.reduce((sum, length) => sum + length, 0);
    const { bytes } = await read(layout, 0, end);
    expect(bytes.equals(expectedBytes(made, 2).subarray(0, end))).toBe(true);
    const asked = server.requests.slice(before);
    expect(asked).toHaveLength(3);
    for (let i = 1; i < asked.length; i++) {
      const [previous, next] = [asked[i - 1]!, asked[i]!];
      // Sent within the last 50 ms of the previous body (its wait on loopback is about a millisecond), and not after it.
      expect(next.startedAt, `segment ${i + 1}`).toBeGreaterThan(previous.endedAt! - 50);
      expect(next.startedAt - previous.startedAt, `segment ${i + 1}`).toBeGreaterThan(200);
    }
  });

  it('errors the body, not the file, when a segment changed its size on the server', async () => {
    const { layout, server } = await planned(TS_VARIANTS, 'master.m3u8');
    // The layout says segment 3 is longer than it is: its answer no longer fits.
    const changed = {
      ...layout,
      parts: layout.parts.map((part, i) => (i === 2 ? { ...part, resourceSize: part.resourceSize! + 1 } : part)),
    };
    const start = layout.parts[0]!.length;
    await expect(read(changed, start, start + layout.parts[1]!.length + 10)).rejects.toThrow(/segment 3 of 15 .* sent bytes 0–9 of/);
    expect(server.requests.length).toBeGreaterThan(0);
  });

  it("keeps each segment's duration as ffmpeg wrote it (the player's playlist), and none for an initialization section", async () => {
    const { made, layout } = await planned(FMP4, 'v0/index.m3u8');
    const listed = [...readFileSync(join(made.dir, 'v0/index.m3u8'), 'utf8').matchAll(/#EXTINF:([\d.]+),/g)].map((m) => Number(m[1]));
    expect(listed.length).toBeGreaterThan(10);
    expect(layout.parts[0]!.seconds).toBeUndefined();
    expect(layout.parts.slice(1).map((part) => part.seconds)).toEqual(listed);
  });
});
