import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `stitch` command (npm run build:cli), as users run it: its launcher. */
export const STITCH_BIN = fileURLToPath(new URL('../../bin/stitch', import.meta.url));
const EXIT_REPORT = fileURLToPath(new URL('./exit-report.cjs', import.meta.url));
const PUBLIC_NAMES = fileURLToPath(new URL('./public-names.cjs', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The child's peak resident memory, when it exited on its own. */
  peakRssBytes?: number;
  /** The built-in modules it loaded (e.g. 'internal/deps/undici/undici'), when it exited on its own. */
  loadedModules?: string[];
  /** Node's own arguments (e.g. `--snapshot-blob FILE`), when it exited on its own. */
  execArgv?: string[];
  /** Killed after `timeoutMs`. */
  timedOut: boolean;
}

export interface CliOptions {
  /** The child is killed (SIGKILL) if it runs longer: a hang fails the test instead of hanging it. */
  timeoutMs?: number;
  /** Another launcher than bin/stitch (e.g. a copy without the snapshot). */
  bin?: string;
  /**
   * Public hosts on loopback (public-names.cjs): `.public.test` names resolve to a public address that
   * the CLI's check accepts and a NAT step turns into 127.0.0.1; `.rebind.test` names resolve to 127.0.0.2,
   * `.flip.test` names rebind there after their first lookup.
   */
  publicNames?: boolean;
}

let runs = 0;

/** Starts `stitch ARGS` in `cwd`; `done` resolves when it exits. */
export function startStitch(args: string[], cwd: string, options: CliOptions = {}): { child: ChildProcess; done: Promise<CliResult> } {
  // Outside `cwd`, so tests can assert that the folder holds exactly what the CLI made.
  const reportFile = join(tmpdir(), `stitch-exit-report-${process.pid}-${++runs}`);
  const preloads = [EXIT_REPORT, ...(options.publicNames ? [PUBLIC_NAMES] : [])].map((file) => `--require ${file}`);
  const nodeOptions = [process.env.NODE_OPTIONS, ...preloads].filter(Boolean).join(' ');
  const child = spawn(options.bin ?? STITCH_BIN, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: nodeOptions, STITCH_EXIT_REPORT_FILE: reportFile },
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
      let report: { peakRssBytes?: number; modules?: string[]; execArgv?: string[] } = {};
      try {
        report = JSON.parse(readFileSync(reportFile, 'utf8')) as typeof report;
        rmSync(reportFile);
      } catch {
        // Killed before it could write it.
      }
      const { peakRssBytes, modules: loadedModules, execArgv } = report;
      resolve({ code, signal, stdout, stderr, peakRssBytes, loadedModules, execArgv, timedOut });
    }),
  );
  return { child, done };
}

export function runStitch(args: string[], cwd: string, options?: CliOptions): Promise<CliResult> {
  return startStitch(args, cwd, options).done;
}
