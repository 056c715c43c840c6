import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built `stitch` command (npm run build:cli), as users run it. */
export const STITCH_BIN = fileURLToPath(new URL('../../bin/stitch.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `stitch ARGS` in `cwd`; `done` resolves when it exits. */
export function startStitch(args: string[], cwd: string): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [STITCH_BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

export function runStitch(args: string[], cwd: string): Promise<CliResult> {
  return startStitch(args, cwd).done;
}
