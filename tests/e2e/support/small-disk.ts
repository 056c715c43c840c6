/**
 * A small disk of the test's own: a fresh tmpfs of a given size, mounted at a new temp folder, for tests that
 * need the browser's profile and its download folder on one nearly full file system (issue 48). Mounting needs
 * root, or `sudo -n` (passwordless); without either it throws in plain words: a test that asks for a small disk
 * fails, it never skips.
 *
 * The launchers pick their folders from the system's temp folder (`makeProfile` in chromium.ts, puppeteer's
 * Firefox profile), so `onDisk(launch)` runs a launch with TMPDIR on the small disk: the profile lands there,
 * and the browser, started with that environment, keeps its own temp files there too, as on a machine with one
 * disk. Call smallDisk before profile() and the browser, so that cleanup (run in reverse) closes them first and
 * unmounts last; a disk still busy is unmounted lazily.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmdirSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Registers a step run after the test, pass or fail (setup.ts's onCleanup). */
export type Cleanup = (undo: () => unknown) => void;

export interface SmallDisk {
  /** Where the tmpfs is mounted. */
  dir: string;
  /** Its size in bytes, as mounted. */
  size: number;
  /** Free bytes as an unprivileged process sees them (statfs: available blocks × block size). */
  free(): number;
  /** Writes a filler file of `bytes` bytes (each call adds one); throws if they do not fit. */
  fill(bytes: number): void;
  /** Fills the disk until `bytes` are left free (no-op when fewer are free already); returns the filler's size. */
  leave(bytes: number): number;
  /** Removes every filler file. */
  release(): void;
  /** Runs `launch` with the system's temp folder (TMPDIR) on this disk, then puts it back. */
  onDisk<T>(launch: () => T): T;
}

const FILLER_PREFIX = '.small-disk-filler-';
const CHUNK = Buffer.alloc(4 * 1024 * 1024);

export function smallDisk(sizeBytes: number, cleanup: Cleanup): SmallDisk {
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0) throw new Error(`small disk: a size in bytes is needed, not ${sizeBytes}`);
  const dir = mkdtempSync(join(tmpdir(), 'stitch-small-disk-'));
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  const mountArgs = ['-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700,uid=${uid},gid=${gid}`, 'stitch-small-disk', dir];
  try {
    privileged('mount', mountArgs);
  } catch (error) {
    rmdirSync(dir);
    throw new Error(
      `small disk: could not mount a tmpfs of ${sizeBytes} bytes at ${dir}; the test needs root or passwordless sudo ` +
        `(sudo -n mount): ${String(error instanceof Error ? error.message : error).trim()}`,
      { cause: error },
    );
  }
  cleanup(() => unmount(dir));

  let fillers = 0;
  const free = () => {
    const s = statfsSync(dir);
    return s.bavail * s.bsize;
  };
  const fill = (bytes: number) => {
    const path = join(dir, `${FILLER_PREFIX}${++fillers}`);
    const fd = openSync(path, 'w');
    try {
      for (let left = bytes; left > 0;) {
        const n = writeSync(fd, CHUNK, 0, Math.min(left, CHUNK.length));
        left -= n;
      }
    } catch (error) {
      closeSync(fd);
      rmSync(path, { force: true });
      throw new Error(`small disk: ${bytes} bytes of filler do not fit (${free()} free): ${String(error)}`, { cause: error });
    }
    closeSync(fd);
  };
  const release = () => {
    for (const name of readdirSync(dir)) if (name.startsWith(FILLER_PREFIX)) rmSync(join(dir, name), { force: true });
  };
  const leave = (bytes: number) => {
    const extra = free() - bytes;
    if (extra > 0) fill(extra);
    return Math.max(0, extra);
  };
  const onDisk = <T>(launch: () => T): T => {
    const before = process.env.TMPDIR;
    const restore = () => {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    };
    process.env.TMPDIR = dir;
    let result: T;
    try {
      result = launch();
    } catch (error) {
      restore();
      throw error;
    }
    if (result instanceof Promise) return result.finally(restore) as T;
    restore();
    return result;
  };
  return { dir, size: sizeBytes, free, fill, leave, release, onDisk };
}

/** Runs a command as root: directly when root already, else through `sudo -n` (never asks for a password). */
function privileged(command: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  execFileSync(asRoot ? command : 'sudo', asRoot ? args : ['-n', command, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
}

function unmount(dir: string): void {
  try {
    privileged('umount', [dir]);
  } catch {
    // Busy (a browser's helper still holds a file): detach it now, the kernel frees it once the last file closes.
    privileged('umount', ['-l', dir]);
  }
  rmdirSync(dir);
}
