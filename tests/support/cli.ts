import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `stitch` command (npm run build:cli), as users run it. */
export const STITCH_BIN = fileURLToPath(new URL('../../bin/stitch.js', import.meta.url));
const PEAK_RSS = fileURLToPath(new URL('./peak-rss.mjs', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The child's peak resident memory, when it exited on its own. */
  peakRssBytes?: number;
  /** Killed after `timeoutMs`. */
  timedOut: boolean;
}

export interface CliOptions {
  /** The child is killed (SIGKILL) if it runs longer: a hang fails the test instead of hanging it. */
  timeoutMs?: number;
}

let runs = 0;

/** Starts `stitch ARGS` in `cwd`; `done` resolves when it exits. */
export function startStitch(args: string[], cwd: string, options: CliOptions = {}): { child: ChildProcess; done: Promise<CliResult> } {
  // Outside `cwd`, so tests can assert that the folder holds exactly what the CLI made.
  const rssFile = join(tmpdir(), `stitch-peak-rss-${process.pid}-${++runs}`);
  const child = spawn(process.execPath, ['--import', PEAK_RSS, STITCH_BIN, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, STITCH_PEAK_RSS_FILE: rssFile },
  });
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  const timer =
    options.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), child.kill('SIGKILL')), options.timeoutMs);
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      let peakRssBytes: number | undefined;
      try {
        peakRssBytes = Number(readFileSync(rssFile, 'utf8'));
        rmSync(rssFile);
      } catch {
        // Killed before it could write it.
      }
      resolve({ code, signal, stdout, stderr, peakRssBytes, timedOut });
    }),
  );
  return { child, done };
}

export function runStitch(args: string[], cwd: string, options?: CliOptions): Promise<CliResult> {
  return startStitch(args, cwd, options).done;
}
