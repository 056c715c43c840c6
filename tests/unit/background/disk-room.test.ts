import { describe, expect, it } from 'vitest';
import {
  ROOM_MARGIN_BYTES,
  roomToFinish,
  saveCopyFor,
  shortOfRoom,
  STREAMED_OVERLAP_BYTES,
  takeOverRoom,
} from '../../../src/background/jobs/disk-room';

const MB = 1_000_000;

describe('disk room', () => {
  it('a download needs what is left to fetch and the save’s whole copy', () => {
    expect(roomToFinish(240 * MB, 0)).toBe(480 * MB);
    expect(roomToFinish(240 * MB, 200 * MB)).toBe(280 * MB);
    expect(roomToFinish(240 * MB, 240 * MB)).toBe(240 * MB);
    // Where the free space told is only the store's limit (Firefox), the save's copy is not counted against it.
    expect(roomToFinish(240 * MB, 40 * MB, 'none')).toBe(200 * MB);
    // Chrome's streamed save: the browser's file and about one of the store's chunks beside it.
    expect(roomToFinish(240 * MB, 0, 'streamed')).toBe(240 * MB + STREAMED_OVERLAP_BYTES);
    expect(roomToFinish(100 * MB, 100 * MB, 'streamed')).toBe(Math.min(100 * MB, STREAMED_OVERLAP_BYTES));
  });

  it('is short of room only past the margin, and says how much is needed and free', () => {
    expect(shortOfRoom(100 * MB, 100 * MB + ROOM_MARGIN_BYTES)).toBeUndefined();
    // What it says is needed counts the margin: a person compares the two numbers.
    expect(shortOfRoom(100 * MB, 100 * MB + ROOM_MARGIN_BYTES - 1)).toEqual({
      needed: 100 * MB + ROOM_MARGIN_BYTES,
      free: 100 * MB + ROOM_MARGIN_BYTES - 1,
    });
    // Unknown sizes or free space: nobody can tell, so nothing is refused.
    expect(shortOfRoom(undefined, 0)).toBeUndefined();
    expect(shortOfRoom(100 * MB, undefined)).toBeUndefined();
  });

  it('saves by blob while both copies fit, else by the streamed save where the platform has it', () => {
    expect(saveCopyFor(240 * MB, 0, 600 * MB, 'streamed')).toBe('whole');
    expect(saveCopyFor(240 * MB, 0, 398 * MB, 'streamed')).toBe('streamed');
    expect(saveCopyFor(240 * MB, 0, 398 * MB, 'whole')).toBe('whole');
    expect(saveCopyFor(240 * MB, 0, 398 * MB, 'none')).toBe('none');
    // Chrome takes over what it can save streamed; a file that does not fit even so stays with the browser.
    expect(takeOverRoom(240 * MB, 600 * MB, 'streamed')).toBeUndefined();
    expect(takeOverRoom(330 * MB, 398 * MB, 'streamed')).toEqual({
      needed: 330 * MB + STREAMED_OVERLAP_BYTES + ROOM_MARGIN_BYTES,
      free: 398 * MB,
    });
  });

  it('takes a browser download over only when both copies fit: a file that fits once stays with the browser', () => {
    expect(takeOverRoom(240 * MB, 398 * MB)).toEqual({ needed: 480 * MB + ROOM_MARGIN_BYTES, free: 398 * MB });
    expect(takeOverRoom(240 * MB, 600 * MB)).toBeUndefined();
    expect(takeOverRoom(undefined, 1)).toBeUndefined();
  });
});
