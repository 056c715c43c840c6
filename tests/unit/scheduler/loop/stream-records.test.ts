import { describe, expect, it } from 'vitest';
import { streamRecordBytes } from '../../../../src/engine/scheduler/loop/block-request';
import { KiB } from '../views';

describe('records of bytes a player waits for', () => {
  it('are about a tenth of a second at the request’s rate, a power of two between 8 and 128 KiB', () => {
    // Issue 11's small clip at twice its bitrate, two requests sharing the server: 36 kB/s.
    expect(streamRecordBytes(36_000)).toBe(8 * KiB);
    expect(streamRecordBytes(0)).toBe(8 * KiB);
    expect(streamRecordBytes(274_000)).toBe(32 * KiB);
    expect(streamRecordBytes(100_000_000)).toBe(128 * KiB);
  });
});
