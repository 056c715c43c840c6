/**
 * The benchmark scenarios of issue 3 (1–7), issue 12 (a–e: how many connections a server rewards)
 * and issue 30 (hls: a stream on redundant hosts). Each one starts its own loopback mirrors (fresh
 * token buckets and stats every run), may act on them while the client downloads, and says what
 * the optimum is. Every mirror emulates TCP slow start per
 * connection, with its latency as the round trip. Rates are in MB/s of 10^6 bytes; sizes in MiB.
 */
import { defaultEtag, defaultLastModified, startMirror, type Mirror, type MirrorOptions } from '../tests/support/mirror-server';
import { startStreamServer, type StreamServer } from '../tests/support/stream-server';
import { HD_10_MINUTES, redundantMaster, type MadeStream, type StreamRecipe } from '../tests/support/streams';

/** What a scenario does to its mirrors while the client downloads: loopback ones, or simulated ones (tests/support/sim-network.ts). */
export type ScenarioMirror = Pick<Mirror, 'setRate' | 'stallAll' | 'dropConnections'> & { readonly stats: { readonly bytesSent: number } };

/** Calls `action` every `ms` milliseconds of the scenario's clock; the function returned stops it. */
export type Every = (ms: number, action: () => void) => () => void;

/** The real clock's `Every`. */
export const everyRealMs: Every = (ms, action) => {
  const timer = setInterval(action, ms);
  return () => clearInterval(timer);
};

const MB = 1_000_000;
const MiB = 1024 * 1024;

/** The seed of the right content; a lying mirror serves another seed under the same validators. */
export const SEED = 1;

export interface MirrorSpec {
  /** Bytes/s shared by all connections to this mirror; Infinity: uncapped. */
  rate: number;
  latencyMs: number;
  /** Serves this seed's bytes while claiming the right file's ETag and Last-Modified. */
  lieSeed?: number;
  /** Bytes/s of each connection. */
  connectionRate?: number;
  /** Bytes per round trip of each connection (a far server's window). */
  windowBytes?: number;
  /** Connections past this many open at once get 503. */
  maxConnections?: number;
}

export interface Scenario {
  id: string;
  title: string;
  /** For the chart's axis. */
  short: string;
  /** Before --size-scale. Unused for a stream: its size is its file's (`stream`). */
  size: number;
  /** The servers; for a stream, its redundant hosts (only rate and latency apply). */
  mirrors: MirrorSpec[];
  /**
   * An HLS stream (tests/support/streams.ts) on the mirrors as redundant hosts, which a gateway's
   * master playlist names in their order: the client gets that playlist's URL (startStreamHosts).
   * The file is its best variant's segments joined; --size-scale does not apply.
   */
  stream?: StreamRecipe;
  /**
   * The best possible time in seconds, from the size and the caps. Undefined when the optimum is
   * a client's own median time in the scenario named by `baseline` (6: the same without resets).
   */
  optimum?: (size: number) => number;
  baseline?: string;
  /** What the optimum means, for the table and the README. */
  optimumNote: string;
  /** Efficiency target (optimum ÷ time), if the issue sets one. */
  target?: number;
  /** `--only GROUP` selects every scenario of the group. */
  group?: string;
  /** curl also downloads the (first) URL: one connection, the line speed a client can reach. */
  withCurl?: boolean;
  /** Called once the client has started; returns a function that stops whatever it scheduled. */
  during?: (mirrors: ScenarioMirror[], size: number, every: Every) => () => void;
  /** The clients (by name) that run this scenario; default DEFAULT_CLIENTS. */
  clients?: string[];
  /** The bench's clients that cannot do what the scenario asks, each with the reason, for the table. */
  notApplicable?: Record<string, string>;
}

/** The clients of issue 3's scenarios. */
export const DEFAULT_CLIENTS = ['stitch', 'aria2c', 'aria2c-t5'];
/** Issue 12 measures connection counts against aria2c at 16 connections per server. */
const CONNECTION_CLIENTS = ['stitch', 'aria2c-x16'];
/** A stream's reference is what users save one with: ffmpeg, from one host (it knows no redundant hosts). */
const STREAM_CLIENTS = ['stitch', 'ffmpeg'];

const mirrors = (rates: number[], latencyMs = 10): MirrorSpec[] => rates.map((r) => ({ rate: r * MB, latencyMs }));
const sum = (specs: MirrorSpec[]) => specs.reduce((total, m) => total + m.rate, 0);

/** Calls `action` once the mirrors together have sent `bytes` body bytes (over-fetch included). */
function whenSent(all: ScenarioMirror[], bytes: number, every: Every, action: () => void): () => void {
  const stop = every(10, () => {
    if (all.reduce((total, m) => total + m.stats.bytesSent, 0) < bytes) return;
    stop();
    action();
  });
  return stop;
}

const heterogeneous = mirrors([1, 2, 4, 8]);
const equal = mirrors([4, 4, 4, 4]);
const swapping = mirrors([4, 4, 1, 1]);
const far = [{ rate: 4 * MB, latencyMs: 300 }, ...mirrors([4, 4, 4])];
const single = mirrors([8], 50);
const lying = equal.map((m, i) => (i === 1 ? { ...m, lieSeed: SEED + 1 } : m));
const perConnectionCap: MirrorSpec[] = [{ rate: 16 * MB, connectionRate: 1 * MB, latencyMs: 20 }];
const totalCap = mirrors([8], 20);
const twoAllowed: MirrorSpec[] = [{ ...totalCap[0]!, maxConnections: 2 }];
const heterogeneous20 = mirrors([1, 2, 4, 8], 20);
/** 256 KiB per 150 ms round trip: 1.75 MB/s per connection, so 5 connections fill the 8 MB/s. */
const farWindowed: MirrorSpec[] = [{ rate: 8 * MB, latencyMs: 150, windowBytes: 256 * 1024 }];
const uncapped = (count: number): MirrorSpec[] => Array.from({ length: count }, () => ({ rate: Infinity, latencyMs: 0 }));
/** The stream's hosts: ffmpeg, on one host, gets the first, the faster. */
const streamHosts = mirrors([10, 6]);

export const SCENARIOS: Scenario[] = [
  {
    id: '1',
    title: '4 mirrors at 1, 2, 4, 8 MB/s',
    short: '1 · 1/2/4/8',
    size: 64 * MiB,
    mirrors: heterogeneous,
    optimum: (size) => size / sum(heterogeneous),
    optimumNote: 'size ÷ Σ caps (15 MB/s)',
    target: 0.95,
  },
  {
    id: '2',
    title: '4 equal mirrors at 4 MB/s',
    short: '2 · equal',
    size: 64 * MiB,
    mirrors: equal,
    optimum: (size) => size / sum(equal),
    optimumNote: 'size ÷ Σ caps (16 MB/s)',
    target: 0.95,
  },
  {
    id: '3',
    title: '4 × 4 MB/s, mirror 3 stalls for good at 50%',
    short: '3 · stall',
    size: 64 * MiB,
    mirrors: equal,
    // First half at all four caps, second half at the three left.
    optimum: (size) => size / 2 / sum(equal) + size / 2 / (sum(equal) - equal[2]!.rate),
    optimumNote: 'half ÷ 16 MB/s + half ÷ 12 MB/s',
    target: 0.9,
    during: (all, size, every) => whenSent(all, size / 2, every, () => all[2]!.stallAll()),
  },
  {
    id: '4',
    title: '2 × 4 MB/s and 2 × 1 MB/s swap every 2 s',
    short: '4 · swap',
    size: 64 * MiB,
    mirrors: swapping,
    optimum: (size) => size / sum(swapping),
    optimumNote: 'size ÷ Σ caps (10 MB/s at every moment)',
    target: 0.9,
    during: (all, _size, every) => {
      let fastFirst = true;
      return every(2000, () => {
        fastFirst = !fastFirst;
        all.forEach((m, i) => m.setRate((i < 2 === fastFirst ? 4 : 1) * MB));
      });
    },
  },
  {
    id: '5',
    title: '4 × 4 MB/s, mirror 1 at 300 ms latency (others 10 ms)',
    short: '5 · 300 ms',
    size: 64 * MiB,
    mirrors: far,
    optimum: (size) => size / sum(far),
    optimumNote: 'size ÷ Σ caps (16 MB/s), latency ignored',
    target: 0.9,
  },
  {
    id: '6a',
    title: '1 server at 8 MB/s, 50 ms latency, no resets',
    short: '6a · no reset',
    size: 32 * MiB,
    mirrors: single,
    optimum: (size) => size / sum(single),
    optimumNote: 'size ÷ cap (8 MB/s); baseline of 6',
  },
  {
    id: '6',
    title: 'the same server reset every 1 s',
    short: '6 · reset/1 s',
    size: 32 * MiB,
    mirrors: single,
    baseline: '6a',
    optimumNote: "the same client's median time in 6a",
    target: 0.95,
    during: (all, _size, every) => every(1000, () => all[0]!.dropConnections()),
  },
  {
    id: '7',
    title: '4 × 4 MB/s, mirror 2 serves other bytes, same size and validators',
    short: '7 · bad bytes',
    size: 32 * MiB,
    mirrors: lying,
    optimum: (size) => size / (sum(lying) - lying[1]!.rate),
    optimumNote: 'size ÷ Σ caps of the 3 honest mirrors (12 MB/s)',
  },
  {
    id: 'a',
    title: '1 server, 1 MB/s per connection, 16 MB/s in all',
    short: 'a · 1/conn',
    size: 32 * MiB,
    mirrors: perConnectionCap,
    optimum: (size) => size / sum(perConnectionCap),
    optimumNote: 'size ÷ total cap (16 MB/s, 16 connections)',
    clients: CONNECTION_CLIENTS,
  },
  {
    id: 'b',
    title: '1 server, 8 MB/s in all, no per-connection cap',
    short: 'b · 8 total',
    size: 32 * MiB,
    mirrors: totalCap,
    optimum: (size) => size / sum(totalCap),
    optimumNote: 'size ÷ cap (8 MB/s)',
    clients: CONNECTION_CLIENTS,
  },
  {
    id: 'c',
    title: '1 server, 8 MB/s, 503 past two connections',
    short: 'c · 503 > 2',
    size: 32 * MiB,
    mirrors: twoAllowed,
    optimum: (size) => size / sum(twoAllowed),
    optimumNote: 'size ÷ cap (8 MB/s)',
    clients: CONNECTION_CLIENTS,
  },
  {
    id: 'd',
    title: '4 mirrors at 1, 2, 4, 8 MB/s, 20 ms',
    short: 'd · 1/2/4/8',
    size: 32 * MiB,
    mirrors: heterogeneous20,
    optimum: (size) => size / sum(heterogeneous20),
    optimumNote: 'size ÷ Σ caps (15 MB/s)',
    target: 0.95,
    clients: CONNECTION_CLIENTS,
  },
  {
    id: 'e',
    title: '1 far server (150 ms), 256 KiB per round trip per connection, 8 MB/s in all',
    short: 'e · far',
    size: 32 * MiB,
    mirrors: farWindowed,
    optimum: (size) => size / sum(farWindowed),
    optimumNote: 'size ÷ cap (8 MB/s, 5 connections)',
    clients: CONNECTION_CLIENTS,
  },
  // Line speed (issue 13): nothing but the client and the server's CPU limits the rate.
  {
    id: 'uncapped-1',
    title: '1 uncapped server',
    short: 'u1 · uncapped',
    size: 1024 * MiB,
    mirrors: uncapped(1),
    optimumNote: 'none (no cap): compare the times; curl is the line speed',
    group: 'uncapped',
    withCurl: true,
  },
  {
    id: 'uncapped-4',
    title: '4 uncapped mirrors',
    short: 'u4 · uncapped',
    size: 1024 * MiB,
    mirrors: uncapped(4),
    optimumNote: 'none (no cap): compare the times; curl fetches the first URL',
    group: 'uncapped',
    withCurl: true,
  },
  // Issue 30: "A 10-minute 720p HLS stream over two redundant hosts saves as one playable file, within
  // 1.1× of the optimum over the hosts' rates".
  {
    id: 'hls',
    title: '10 min of 720p HLS (2.8 Mbit/s, 2 s segments) on 2 redundant hosts at 10 and 6 MB/s',
    short: 'hls · 720p',
    size: 0,
    mirrors: streamHosts,
    stream: HD_10_MINUTES,
    optimum: (size) => size / sum(streamHosts),
    optimumNote: 'size of the joined segments ÷ Σ rates (16 MB/s)',
    // Within 1.1× the optimum: 1 ÷ 1.1 = 0.909…
    target: 0.91,
    clients: STREAM_CLIENTS,
    notApplicable: {
      aria2c: "reads no HLS playlist: saves the playlist's text and exits 0",
      curl: "reads no HLS playlist: saves the playlist's text and exits 0",
    },
  },
];

/** How a scenario's mirror is served for a file of `size` bytes (slowStart false: to measure what it costs). */
export function mirrorOptions(spec: MirrorSpec, size: number, slowStart = true): MirrorOptions {
  const options: MirrorOptions = {
    size,
    seed: spec.lieSeed ?? SEED,
    rate: Number.isFinite(spec.rate) ? spec.rate : undefined,
    latencyMs: spec.latencyMs,
    // Slow start paces by the round trip: a server without latency (loopback, uncapped) has none to emulate.
    slowStart: slowStart && (spec.latencyMs ?? 0) > 0,
    connectionRate: spec.connectionRate,
    windowBytes: spec.windowBytes,
    connectionLimit: spec.maxConnections === undefined ? undefined : { max: spec.maxConnections },
  };
  if (spec.lieSeed !== undefined) {
    options.etag = defaultEtag(SEED, size);
    options.lastModified = defaultLastModified(SEED);
  }
  return options;
}

/** Starts the scenario's mirrors on loopback. */
export function startMirrors(scenario: Scenario, size: number, slowStart = true): Promise<Mirror[]> {
  return Promise.all(scenario.mirrors.map((spec) => startMirror(mirrorOptions(spec, size, slowStart))));
}

/** The hosts of a stream scenario, and the gateway that serves the master playlist naming them all. */
export interface StreamHosts {
  /** The gateway's master playlist: every host's variants, redundant. */
  url: string;
  /** The first host's own master playlist, for a client that takes one host. */
  oneHostUrl: string;
  hosts: StreamServer[];
  close(): Promise<void>;
}

/** Starts a stream scenario's hosts on loopback (its mirrors' rates and latencies), serving `made`. */
export async function startStreamHosts(scenario: Scenario, made: MadeStream): Promise<StreamHosts> {
  const hosts = await Promise.all(
    scenario.mirrors.map((spec) => startStreamServer({ root: made.dir, rate: spec.rate, latencyMs: spec.latencyMs })),
  );
  const origins = hosts.map((host) => host.origin);
  const gateway = await startStreamServer({ root: made.dir, files: { '/redundant.m3u8': redundantMaster(made, origins) } });
  return {
    url: `${gateway.origin}/redundant.m3u8`,
    oneHostUrl: `${hosts[0]!.origin}/master.m3u8`,
    hosts,
    close: async () => {
      await Promise.all([gateway, ...hosts].map((server) => server.close()));
    },
  };
}
