import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeFetch } from '../../src/cli/node-fetch';
import { LiveRecordings, RECORDINGS_KEY } from '../../src/background/streams/live-recordings';
import { MemoryStore } from '../support/memory-store';
import { startStreamServer, type StreamServer } from '../support/stream-server';
import { stream, TS_VARIANTS, type MadeStream } from '../support/streams';

// Issue 30: the extension records a live HLS stream (the CLI's recorder), keeps its bytes in the
// store as they come, and saves them when it is stopped, when the stream ends, or on the next start
// of a worker that stopped mid-recording. Against a loopback live playlist of ffmpeg's segments.
let made: MadeStream;
let segments: Buffer[];
let names: string[];
const servers: StreamServer[] = [];
beforeAll(async () => {
  made = await stream(TS_VARIANTS);
  names = readFileSync(join(made.dir, 'v2/index.m3u8'), 'utf8')
    .split('\n')
    .filter((line) => line.endsWith('.ts'));
  segments = names.map((name) => readFileSync(join(made.dir, 'v2', name)));
}, 180_000);
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** A live playlist: a window of four, one more segment every `everyMs`, ended (EXT-X-ENDLIST) after `count`. */
async function liveServer(everyMs: number, count = names.length): Promise<string> {
  const started = Date.now();
  const playlist = () => {
    const end = Math.min(count, 4 + Math.floor((Date.now() - started) / everyMs));
    const start = Math.max(0, end - 4);
    const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:1', `#EXT-X-MEDIA-SEQUENCE:${start}`];
    for (let i = start; i < end; i++) lines.push('#EXTINF:2.0,', `v2/${names[i]}`);
    if (end === count) lines.push('#EXT-X-ENDLIST');
    return `${lines.join('\n')}\n`;
  };
  const server = await startStreamServer({ root: made.dir, files: { '/live.m3u8': playlist } });
  servers.push(server);
  return `${server.origin}/live.m3u8`;
}

/** Recordings over a memory store, a storage map, and a saver that "downloads" the stored bytes as the browser would. */
function recordings() {
  const store = new MemoryStore();
  const storage = new Map<string, unknown>();
  const saved: { name: string; bytes: Buffer }[] = [];
  const notices: string[] = [];
  let changes = 0;
  const saver = {
    start: async (target: { jobId: string; filename: string; size: number }) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of store.read(target.jobId, 0, target.size)) chunks.push(chunk.slice());
      saved.push({ name: target.filename, bytes: Buffer.concat(chunks) });
      return { id: saved.length };
    },
    finished: async () => ({ ok: true as const }),
  };
  const live = new LiveRecordings({
    store: async () => store,
    saver,
    storage: { get: async (key) => storage.get(key), set: async (key, value) => void storage.set(key, value) },
    fetchFor: () => nodeFetch,
    during: (_url, work) => work(),
    notice: async (message) => notices.push(message),
    onChange: () => changes++,
  });
  return { live, store, storage, saved, notices, changes: () => changes };
}

/** Index of the segment `bytes` starts with, and how many whole segments in order make them up (-1: none). */
function wholeSegments(bytes: Buffer): { first: number; count: number } {
  const first = segments.findIndex((segment) => bytes.subarray(0, segment.length).equals(segment));
  if (first < 0) return { first, count: -1 };
  let end = first;
  let length = 0;
  while (length < bytes.length && end < segments.length) length += segments[end++]!.length;
  return { first, count: bytes.equals(Buffer.concat(segments.slice(first, end))) ? end - first : -1 };
}

const until = async (test: () => boolean, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('live recordings in the extension', () => {
  it('records until the stream ends, from three segments before the live edge, and saves whole segments in order', async () => {
    const url = await liveServer(400, 10);
    const { live, saved, notices, storage, store } = recordings();
    await live.start(url, 'Live now');
    expect(live.view(url)).toEqual({ seconds: 0, bytes: 0, saving: false });
    await until(() => saved.length === 1);
    await until(() => live.view(url) === undefined);
    expect(saved[0]!.name).toBe('Live now.ts');
    // The window held four at the start: the recording began three before its edge, with the second.
    expect(wholeSegments(saved[0]!.bytes)).toEqual({ first: 1, count: 9 });
    expect(notices).toEqual([
      expect.stringMatching(/^The live stream ended: saved the recording Live now\.ts \(18 sec of video, [\d.]+ MB\)\.$/),
    ]);
    expect(storage.get(RECORDINGS_KEY)).toEqual([]);
    expect(await store.listJobs()).toEqual([]);
  });

  it('saves what was recorded when the user stops, and keeps the recording in storage while it runs', async () => {
    const url = await liveServer(300);
    const { live, saved, notices, storage } = recordings();
    await live.start(url, 'Show');
    await until(() => (live.view(url)?.seconds ?? 0) >= 8);
    const kept = storage.get(RECORDINGS_KEY) as { url: string; bytes: number }[];
    expect(kept).toEqual([expect.objectContaining({ url, stem: 'Show', extension: 'ts' })]);
    expect(kept[0]!.bytes).toBeGreaterThan(0);
    live.stop(url);
    await until(() => saved.length === 1);
    const { count } = wholeSegments(saved[0]!.bytes);
    expect(count).toBeGreaterThanOrEqual(4);
    expect(notices).toEqual([expect.stringMatching(/^Saved the recording Show\.ts \(\d+ sec of video, /)]);
  });

  it('on the next start of a worker that stopped mid-recording, saves what was recorded and says why it ended', async () => {
    const { live, store, storage, saved, notices } = recordings();
    await store.writeBlock('rec-1', 0, new Uint8Array(segments[0]!));
    await store.writeBlock('rec-1', segments[0]!.length, new Uint8Array(segments[1]!));
    const bytes = segments[0]!.length + segments[1]!.length;
    storage.set(RECORDINGS_KEY, [{ url: 'https://tv.example/live.m3u8', id: 'rec-1', stem: 'News', extension: 'ts', bytes, seconds: 4 }]);
    await live.restore();
    expect(saved.map((s) => [s.name, wholeSegments(s.bytes)])).toEqual([['News.ts', { first: 0, count: 2 }]]);
    expect(notices).toEqual([
      expect.stringMatching(
        /^The recording News\.ts stopped: the browser stopped Stitch while it recorded\. What was recorded is saved \(4 sec of video/,
      ),
    ]);
    expect(storage.get(RECORDINGS_KEY)).toEqual([]);
    expect(await store.storedRanges('rec-1')).toEqual([]);
  });

  it('says plainly when a stream fails before a segment was recorded, and saves nothing', async () => {
    const { live, saved, notices } = recordings();
    const server = await startStreamServer({ root: made.dir });
    servers.push(server);
    await live.start(`${server.origin}/gone.m3u8`, 'Gone');
    await until(() => notices.length === 1);
    expect(saved).toEqual([]);
    expect(notices[0]).toMatch(/^The recording Gone\.ts stopped before a segment was recorded: .*404.*\. Nothing was saved\.$/);
  });
});
