/**
 * The download clients under test, behind one interface, and the one way every client is run and
 * measured from outside: a child process (so it never shares a thread with the mirrors), wall time
 * from spawn to exit, and peak RSS from /proc/<pid>/status (VmHWM, sampled every 10 ms: it matched
 * `/usr/bin/time`'s maxrss within a few per cent, and needs nothing installed).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { STITCH_BIN } from '../tests/support/cli';

export interface Command {
  file: string;
  args: string[];
}

/** What `stitch get --stats FILE` reports (when the CLI has it); kept as a cross-check. */
export interface StitchStats {
  seconds: number;
  size: number;
  bytesReceived: number;
  requests: number;
  peakRssBytes: number;
  mirrors: { url: string; bytes: number; requests: number; dropped?: string }[];
}

export interface Client {
  /** Short name for the table: stitch, aria2c, … */
  name: string;
  /** The full configuration, for the README and the JSON. */
  description: string;
  /** The command that downloads `urls` (the same file on every mirror) to `output`. */
  command(urls: string[], output: string, statsFile: string): Command;
  /** Of a stream, it takes one host's own playlist (it knows no redundant hosts), not the gateway's naming them all. */
  oneHost?: boolean;
  /** It writes a container of its own (a remux): its file is checked to play for the stream's length, not byte for byte. */
  remuxes?: boolean;
  /** Whatever the client reports about itself after it exits. */
  readStats?(statsFile: string): Promise<StitchStats | undefined>;
}

export interface Measured {
  seconds: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  peakRssBytes: number | undefined;
  /** The end of stdout + stderr, to explain a failure. */
  outputTail: string;
}

/** What the built CLI supports today: the multi-mirror flags arrive with the scheduler. */
export function stitchCapabilities(): { mirror: boolean; stats: boolean } {
  const help = spawnSync(STITCH_BIN, ['--help'], { encoding: 'utf8' });
  const text = `${help.stdout}${help.stderr}`;
  return { mirror: text.includes('--mirror'), stats: text.includes('--stats') };
}

/** The Node flags the launcher runs the CLI with. */
function launcherFlags(): string[] {
  return readFileSync(join(dirname(STITCH_BIN), 'node-flags'), 'utf8')
    .trim()
    .split(/\s+/);
}

const isBundle = (bin: string) => /\.c?js$/.test(bin);

/**
 * `bin`: another build to run under another name (`npm run bench -- --baseline-cli`), for before/after in one
 * run: a launcher (run as it is), or a bundle (`.js`, `.cjs`: run by Node with the launcher's flags, without
 * a snapshot).
 */
export function stitchClient(capabilities = stitchCapabilities(), bin = STITCH_BIN, name = 'stitch'): Client {
  return {
    name,
    description: `${bin === STITCH_BIN ? '' : `${bin}: `}${
      capabilities.mirror ? 'stitch get URL --mirror URL… -q' : 'stitch get URL -q (first URL only: this build has no --mirror yet)'
    }`,
    // The built CLI runs as `npx stitch` runs it: through its launcher (its snapshot, its Node flags).
    command: (urls, output, statsFile) => ({
      file: isBundle(bin) ? process.execPath : bin,
      args: [
        ...(isBundle(bin) ? [...launcherFlags(), bin] : []),
        'get',
        urls[0]!,
        ...(capabilities.mirror ? urls.slice(1).flatMap((url) => ['--mirror', url]) : []),
        '-o',
        output,
        '-q',
        ...(capabilities.stats ? ['--stats', statsFile] : []),
      ],
    }),
    readStats: capabilities.stats
      ? (statsFile) =>
          readFile(statsFile, 'utf8').then(
            (text) => JSON.parse(text) as StitchStats,
            () => undefined,
          )
      : undefined,
  };
}

/** The configuration the issue fixes. */
export const ARIA2_FLAGS = ['--no-conf', '-s16', '-x4', '-k1M', '--uri-selector=adaptive', '--max-tries=0', '--retry-wait=1'];

/** Issue 12's reference for connection counts: aria2c -x16 -s16 -k1M (up to 16 connections per server). */
export const ARIA2_X16_FLAGS = ARIA2_FLAGS.map((flag) => (flag === '-x4' ? '-x16' : flag));

export function aria2Client(name: string, extra: string[] = [], base = ARIA2_FLAGS): Client {
  const flags = [...base, ...extra];
  return {
    name,
    description: `aria2c ${flags.join(' ')}`,
    command: (urls, output) => {
      const slash = output.lastIndexOf('/');
      return { file: 'aria2c', args: [...flags, '-q', '-d', output.slice(0, slash), '-o', output.slice(slash + 1), ...urls] };
    },
  };
}

/** One connection to the first URL, no resume: what the link gives a plain client. */
export function curlClient(): Client {
  return {
    name: 'curl',
    description: 'curl -sS --fail -o FILE URL (the first URL only)',
    command: (urls, output) => ({ file: 'curl', args: ['-sS', '--fail', '-o', output, urls[0]!] }),
  };
}

/** What users save an HLS stream with: its segments remuxed into one MPEG-TS, over one connection to one host. */
export function ffmpegClient(): Client {
  return {
    name: 'ffmpeg',
    description: 'ffmpeg -i URL -c copy -f mpegts FILE (one host; a stream scenario only)',
    command: (urls, output) => ({
      file: 'ffmpeg',
      args: ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', urls[0]!, '-c', 'copy', '-f', 'mpegts', output],
    }),
    oneHost: true,
    remuxes: true,
  };
}

/** The clients of a bench run, Stitch first. */
export function allClients(): Client[] {
  return [
    stitchClient(),
    aria2Client('aria2c'),
    // The fixed configuration keeps aria2's 60 s read timeout; this one is aria2 tuned for faults.
    aria2Client('aria2c-t5', ['--timeout=5', '--connect-timeout=5']),
    aria2Client('aria2c-x16', [], ARIA2_X16_FLAGS),
    ffmpegClient(),
  ];
}

function vmHwmBytes(pid: number): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined; // exited, or not Linux
  }
}

/**
 * Every client runs without NODE_EXTRA_CA_CERTS: a machine that sets it (this workplace does) makes
 * every Node process read those certificates before any script runs, 70–90 ms on this machine
 * (`node -e 0`: 0.09–0.12 s with it, 0.02–0.03 s without), a cost of that machine and not of
 * Stitch, which the other clients do not pay. The loopback scenarios use no TLS.
 */
const CLIENT_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_EXTRA_CA_CERTS'));

/**
 * Runs one command in `cwd`; `onStart` is called right after the spawn (for the scenario's timed
 * actions). Past `timeoutMs`, `onTimeout` is called (to see what was still going on), then the child gets
 * SIGTERM, and SIGKILL two seconds later.
 */
export function measure(command: Command, cwd: string, timeoutMs: number, onStart: () => void, onTimeout = () => {}): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command.file, command.args, { cwd, env: CLIENT_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (data: Buffer) => (tail = (tail + data.toString()).slice(-2000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let peak: number | undefined;
    const sample = () => {
      const hwm = child.pid === undefined ? undefined : vmHwmBytes(child.pid);
      if (hwm !== undefined) peak = Math.max(peak ?? 0, hwm);
    };
    const sampler = setInterval(sample, 10);
    let timedOut = false;
    let killer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      onTimeout();
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), 2000);
    }, timeoutMs);
    child.on('error', (error) => {
      clearInterval(sampler);
      clearTimeout(timer);
      reject(error);
    });
    let seconds = 0;
    child.on('exit', () => {
      seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      clearTimeout(timer);
      clearTimeout(killer);
    });
    // 'close' comes after 'exit' once the output is drained.
    child.on('close', (code, signal) => {
      resolve({ seconds, code, signal, timedOut, peakRssBytes: peak, outputTail: tail.trim() });
    });
    onStart();
  });
}
