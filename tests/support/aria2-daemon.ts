import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A real `aria2c --enable-rpc` on loopback (Debian's aria2), with its own download folder. */
export interface Aria2Daemon {
  readonly url: string;
  readonly wsUrl: string;
  readonly secret: string;
  /** Where aria2 saves (its --dir). */
  readonly dir: string;
  /** Kills aria2c (SIGKILL: as a crash or a power cut would); the folder stays. */
  kill(): Promise<void>;
  /** Kills it and removes its folder. */
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startAria2(secret = 'stitch-test-secret'): Promise<Aria2Daemon> {
  const dir = await mkdtemp(join(tmpdir(), 'stitch-aria2-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'aria2c',
    [
      '--enable-rpc',
      '--rpc-listen-all=false',
      `--rpc-listen-port=${port}`,
      `--rpc-secret=${secret}`,
      `--dir=${dir}`,
      '--quiet',
      '--no-conf',
      '--check-certificate=false',
      '--auto-file-renaming=false',
    ],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}/jsonrpc`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await fetch(url, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 'up', method: 'aria2.getVersion', params: [`token:${secret}`] }),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`aria2c did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const kill = () =>
    new Promise<void>((resolve) =>
      child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGKILL')),
    );
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}/jsonrpc`,
    secret,
    dir,
    kill,
    close: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
