import { formatBytes } from '../../engine';

/**
 * Room on the disk (issue 48). Stitch keeps a download's bytes in the browser's store, then the
 * browser copies the stored file into the download folder: until the copy ends, the file is on the
 * disk twice. On a laptop the profile and the download folder share one disk, so what a download
 * needs of it is what is left to download plus the save's whole copy. The browser tells an
 * extension only its store's free quota (navigator.storage.estimate), which tracks the free disk
 * when the two share it; a download folder on another disk is not seen (docs/using.md).
 */

/** How much more a download needs, and how much is free, in bytes: the words a person reads. */
export interface Room {
  needed: number;
  free: number;
}

/**
 * Kept free beyond what a download needs: the store's own records, the browser's temporary file
 * and the quota's rounding (Chrome reports the free disk in steps).
 */
export const ROOM_MARGIN_BYTES = 32 * 1024 * 1024;

/**
 * What a download of `size` bytes, `stored` of them in the store, still needs until it is saved:
 * what is left to fetch, and the save's copy where the free space told is the disk's (`tracksDisk`;
 * else it is only the store's limit, which the save's copy does not count against).
 */
export function roomToFinish(size: number, stored: number, tracksDisk = true): number {
  return Math.max(0, size - stored) + (tracksDisk ? size : 0);
}

/** Room missing for `needed` more bytes when `free` are free; undefined when it fits or nobody can tell. */
export function shortOfRoom(needed: number | undefined, free: number | undefined): Room | undefined {
  if (needed === undefined || free === undefined || needed + ROOM_MARGIN_BYTES <= free) return undefined;
  return { needed, free };
}

/** The English of a job held for want of room (the pages say it in the user's words from `Room`). */
export function noRoomMessage({ needed, free }: Room): string {
  return `not enough room on the disk: ${formatBytes(needed)} needed to download and save, ${formatBytes(free)} free; free some space and resume`;
}

/**
 * Whether Stitch may take a browser download of `size` bytes over, with `free` bytes free: only
 * when both copies fit. A file that fits once stays with the browser, which writes it once
 * (watched, and rescued only while it still fits twice); so Stitch is never why a disk runs out.
 */
export function takeOverRoom(size: number | undefined, free: number | undefined, tracksDisk = true): Room | undefined {
  return size === undefined ? undefined : shortOfRoom(roomToFinish(size, 0, tracksDisk), free);
}
