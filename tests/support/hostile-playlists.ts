/**
 * Hostile HLS playlists and servers for the CLI's tests (hls-hostile*.test.ts): made-up segments,
 * playlists, public names for loopback servers (public-names.cjs), a server that must see no
 * request, and a run of the CLI bounded in time (30 s) and memory (256 MiB).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, expect } from 'vitest';
import { runStitch, type CliResult } from './cli';
import { startHostile, type HostileServer } from './hostile-server';
import { streamTestBed, type StreamServer } from './stream-server';

export const MiB = 1024 * 1024;
/** Each case ends by itself within this. */
export const CASE_MS = 30_000;

/** `count` segments of `size` bytes each (made up: the CLI joins bytes, it does not read video). */
export function segments(count: number, size = 2_000): Record<string, Uint8Array> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`/s${i}.ts`, randomBytes(size)]));
}

/** A media playlist of `uris` (2 s each), ended unless `live`; `head`: tags before the segments, `each`: before each. */
export function media(uris: string[], { head = [] as string[], live = false, target = 2, each = [] as string[] } = {}): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-MEDIA-SEQUENCE:0', ...head];
  for (const uri of uris) lines.push(...each, '#EXTINF:2.0,', uri);
  if (!live) lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}

export function master(entries: { uri: string; bandwidth: number; extra?: string }[], head: string[] = []): string {
  const lines = ['#EXTM3U', ...head];
  for (const { uri, bandwidth, extra } of entries) lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth}${extra ?? ''}`, uri);
  return `${lines.join('\n')}\n`;
}

/** The public name of a loopback server (public-names.cjs resolves it to 127.0.0.1). */
export function publicOrigin(server: { origin: string }, name = 'cdn'): string {
  return `http://${name}.public.test:${new URL(server.origin).port}`;
}

export const segmentRequests = (server: StreamServer) => server.requests.filter((r) => !r.path.endsWith('.m3u8'));

/** The most requests a stream server had open at once. */
export function mostAtOnce(server: StreamServer): number {
  const edges = server.requests.flatMap((r) => [
    [r.startedAt, 1],
    [r.endedAt ?? Infinity, -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (open += step!));
  return most;
}

/**
 * For a test file: a fresh folder and stream servers per test (streamTestBed), hostile servers
 * closed after each, and the CLI run in the folder with public names.
 */
export function hostileBed(prefix: string) {
  const bed = streamTestBed(prefix);
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
    delete process.env.NODE_EXTRA_CA_CERTS;
  });
  return {
    bed,
    closers,
    hostile: async (handler: Parameters<typeof startHostile>[0]): Promise<HostileServer> => {
      const server = await startHostile(handler);
      closers.push(() => server.close());
      return server;
    },
    /** A server on a local address that the rules forbid a public playlist to reach: it must see nothing. */
    untouchable: (): Promise<StreamServer> =>
      bed.serve({ root: bed.dir, files: { ...segments(3), '/v.m3u8': media(['s0.ts']), '/k.key': new Uint8Array(16) } }),
    /** Runs `stitch get ARGS`; it must end by itself within 30 s, under 256 MiB. */
    stitch: async (args: string[]): Promise<CliResult & { seconds: number }> => {
      const started = Date.now();
      const result = await runStitch(['get', ...args], bed.dir, { timeoutMs: CASE_MS, publicNames: true });
      const seconds = (Date.now() - started) / 1000;
      expect(result.timedOut, `the CLI had to be killed after ${CASE_MS / 1000} s`).toBe(false);
      expect(result.peakRssBytes).toBeLessThan(256 * MiB);
      return { ...result, seconds };
    },
  };
}
