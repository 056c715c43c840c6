import { formatBytes } from '../../engine';
import { CHUNK_BYTES } from '../../storage/opfs-chunks';

/**
 * Room on the disk (issue 48). Stitch keeps a download's bytes in the browser's store, then the
 * browser copies the stored file into the download folder: until the copy ends, the file is on the
 * disk twice. On a laptop the profile and the download folder share one disk, so what a download
 * needs of it is what is left to download plus the save's copy. The browser tells an extension
 * only its store's free quota (navigator.storage.estimate): in Chrome that is the free disk to
 * the byte; in Firefox a share of the disk's size, whatever is free (measured on a small disk).
 * A download folder on another disk is not seen (docs/using.md).
 */

/** How much more a download needs, and how much is free, in bytes: the words a person reads. */
export interface Room {
  needed: number;
  free: number;
}

/**
 * What the save's copy costs of the room told:
 * - 'whole': the browser copies the stored file, both copies on the disk at the end (a blob save);
 * - 'streamed': Chrome's streamed save, the store giving back its chunks behind the browser's
 *   writing (save-release.ts): the browser's file and at most STREAMED_OVERLAP_BYTES of the store;
 * - 'none': the room told is only the store's own limit (Firefox), which the save does not count against.
 */
export type SaveCopy = 'whole' | 'streamed' | 'none';

/**
 * The store's bytes a streamed save keeps beside the browser's file: the chunk the browser is
 * writing and the engine's lead over it (measured: a 200 MiB file kept 78–84 MiB in the store at
 * most, 272 MiB on the disk in all), with room to spare.
 */
export const STREAMED_OVERLAP_BYTES = CHUNK_BYTES + 32 * 1024 * 1024;

/**
 * Kept free beyond what a download needs: the store's own records, the browser's temporary file
 * and the quota's rounding.
 */
export const ROOM_MARGIN_BYTES = 32 * 1024 * 1024;

/** What a download of `size` bytes, `stored` of them in the store, still needs of the room told until it is saved. */
export function roomToFinish(size: number, stored: number, copy: SaveCopy = 'whole'): number {
  const toFetch = Math.max(0, size - stored);
  if (copy === 'none') return toFetch;
  return toFetch + (copy === 'whole' ? size : Math.min(size, STREAMED_OVERLAP_BYTES));
}

/**
 * Room missing for `needed` more bytes when `free` are free; undefined when it fits or nobody can
 * tell. What it says is needed counts the margin: a person compares the two numbers.
 */
export function shortOfRoom(needed: number | undefined, free: number | undefined): Room | undefined {
  if (needed === undefined || free === undefined || needed + ROOM_MARGIN_BYTES <= free) return undefined;
  return { needed: needed + ROOM_MARGIN_BYTES, free };
}

/**
 * How a job saves, given how the platform can: a blob of the whole stored file while that fits,
 * else Chrome's streamed save where it frees the store behind it. `platform`: the least the
 * platform's save can cost ('streamed' where Chrome's save route runs).
 */
export function saveCopyFor(size: number, stored: number, free: number | undefined, platform: SaveCopy): SaveCopy {
  if (platform !== 'streamed') return platform;
  return shortOfRoom(roomToFinish(size, stored, 'whole'), free) ? 'streamed' : 'whole';
}

/** The English of a job held for want of room (the pages say it in the user's words from `Room`). */
export function noRoomMessage({ needed, free }: Room): string {
  return `not enough room on the disk: ${formatBytes(needed)} needed to download and save, ${formatBytes(free)} free; free some space and resume`;
}

/**
 * Whether Stitch may take a browser download of `size` bytes over, with `free` bytes free: only
 * when it can finish and save it there, at the least its platform's save costs. A file that fits
 * only once stays with the browser, which writes it once (watched, and not rescued while it does
 * not fit); so Stitch is never why a disk runs out.
 */
export function takeOverRoom(size: number | undefined, free: number | undefined, platform: SaveCopy = 'whole'): Room | undefined {
  return size === undefined ? undefined : shortOfRoom(roomToFinish(size, 0, platform), free);
}
