import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { expect, test } from 'vitest';
import { MiB, onCleanup } from './support/setup';
import { smallDisk } from './support/small-disk';

const mounted = (dir: string) =>
  readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[1] === dir);

test('the small disk test bed: a tmpfs of its own size, filled and released, unmounted by its cleanup', async () => {
  const undo: (() => unknown)[] = [];
  onCleanup(() => undo.forEach((step) => step())); // if an expectation fails first
  const disk = smallDisk(16 * MiB, (step) => undo.push(step));
  expect(mounted(disk.dir)).toBe(true);
  expect(disk.free()).toBe(16 * MiB);

  disk.fill(10 * MiB);
  expect(disk.free()).toBe(6 * MiB);
  expect(() => disk.fill(10 * MiB)).toThrow(/do not fit/);
  expect(disk.free()).toBe(6 * MiB); // the filler that did not fit is gone
  disk.leave(2 * MiB);
  expect(disk.free()).toBe(2 * MiB);
  disk.release();
  expect(disk.free()).toBe(16 * MiB);

  // The launchers' folders come from the system's temp folder: onDisk puts it on the disk for a launch.
  expect(disk.onDisk(() => tmpdir())).toBe(disk.dir);
  expect(await disk.onDisk(() => Promise.resolve(tmpdir()))).toBe(disk.dir);
  expect(tmpdir()).not.toBe(disk.dir);

  undo.splice(0).forEach((step) => step());
  expect(mounted(disk.dir)).toBe(false);
  expect(existsSync(disk.dir)).toBe(false);
});
