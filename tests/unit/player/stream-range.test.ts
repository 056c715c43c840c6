import { describe, expect, it } from 'vitest';
import {
  answerHeaders,
  answerRange,
  firstMissing,
  parseRangeHeader,
  type StreamAnswer,
} from '../../../src/background/playback/stream-range';

const size = 10_000;
const MAX = 1_000;
/** Stored: the first 3000 bytes, and 6000–8000 (a seek ahead was served first). */
const stored = [
  { start: 0, end: 3000 },
  { start: 6000, end: 8000 },
];
const answer = (header: string | null, have = stored) => answerRange(parseRangeHeader(header, size), size, have, MAX);
const headers = (a: StreamAnswer) => answerHeaders(a, size, 'video/webm');

describe('answering range requests from the stored bytes', () => {
  it('first bytes: 206 with what is stored from 0, at most one chunk', () => {
    const a = answer('bytes=0-');
    expect(a).toEqual({ kind: 'serve', status: 206, start: 0, end: 1000 });
    expect(headers(a)).toMatchObject({
      'Content-Range': 'bytes 0-999/10000',
      'Content-Length': '1000',
      'Content-Type': 'video/webm',
      'Accept-Ranges': 'bytes',
    });
    expect(answer('bytes=0-99')).toEqual({ kind: 'serve', status: 206, start: 0, end: 100 });
  });

  it('middle: a closed range inside what is stored is answered exactly', () => {
    const a = answer('bytes=6500-6999');
    expect(a).toEqual({ kind: 'serve', status: 206, start: 6500, end: 7000 });
    expect(headers(a)['Content-Range']).toBe('bytes 6500-6999/10000');
  });

  it('open-ended: stops at the end of the stored run (the element asks again from there)', () => {
    expect(answer('bytes=2500-')).toEqual({ kind: 'serve', status: 206, start: 2500, end: 3000 });
    expect(answer('bytes=7800-')).toEqual({ kind: 'serve', status: 206, start: 7800, end: 8000 });
    // A closed range reaching past what is stored gets the stored part.
    expect(answer('bytes=2900-3999')).toEqual({ kind: 'serve', status: 206, start: 2900, end: 3000 });
  });

  it('suffix: the last N bytes, clamped to the file', () => {
    const whole = [{ start: 0, end: size }];
    const a = answer('bytes=-500', whole);
    expect(a).toEqual({ kind: 'serve', status: 206, start: 9500, end: 10_000 });
    expect(headers(a)['Content-Range']).toBe('bytes 9500-9999/10000');
    expect(answer('bytes=-99999', whole)).toEqual({ kind: 'serve', status: 206, start: 0, end: 1000 });
    // The tail is not stored yet: wait for its first byte.
    expect(answer('bytes=-500')).toEqual({ kind: 'wait', start: 9500 });
  });

  it('beyond what is stored: wait for the first requested byte', () => {
    expect(answer('bytes=3000-')).toEqual({ kind: 'wait', start: 3000 });
    expect(answer('bytes=5999-6100')).toEqual({ kind: 'wait', start: 5999 });
    expect(answer('bytes=0-', [])).toEqual({ kind: 'wait', start: 0 });
  });

  it('beyond the end: 416 with the size', () => {
    for (const header of ['bytes=10000-', 'bytes=20000-30000', 'bytes=-0']) {
      const a = answer(header);
      expect(a, header).toEqual({ kind: 'unsatisfiable' });
      expect(headers(a)['Content-Range']).toBe('bytes */10000');
    }
    expect(answerRange(parseRangeHeader('bytes=0-', 0), 0, [], MAX)).toEqual({ kind: 'unsatisfiable' });
  });

  it('no Range, or a malformed / multi-range / other-unit one: 200 with the whole file', () => {
    for (const header of [null, 'bytes=5-2', 'bytes=abc', 'bytes=0-1,5-6', 'items=0-5', 'bytes=-', '']) {
      // Sent from byte 0 like any other answer, piece by piece...
      expect(answer(header), String(header)).toEqual({ kind: 'serve', status: 200, start: 0, end: 1000 });
      expect(answer(header, []), String(header)).toEqual({ kind: 'wait', start: 0 });
      // ...under the headers of the whole answer.
      const whole = answerRange(parseRangeHeader(header, size), size, [{ start: 0, end: size }], Infinity);
      expect(whole).toEqual({ kind: 'serve', status: 200, start: 0, end: size });
      expect(headers(whole)).toMatchObject({ 'Content-Length': '10000', 'Accept-Ranges': 'bytes' });
      expect(headers(whole)['Content-Range']).toBeUndefined();
    }
    expect(answerRange(parseRangeHeader(null, 0), 0, [], MAX)).toEqual({ kind: 'serve', status: 200, start: 0, end: 0 });
  });

  it('with every byte stored and no chunk limit: the status, range and headers of the whole answer', () => {
    const whole = answerRange(parseRangeHeader('bytes=6000-', size), size, [{ start: 0, end: size }], Infinity);
    expect(whole).toEqual({ kind: 'serve', status: 206, start: 6000, end: size });
    expect(headers(whole)).toMatchObject({ 'Content-Range': 'bytes 6000-9999/10000', 'Content-Length': '4000' });
  });

  it('tolerates spaces and case, and clamps a last position past the end', () => {
    expect(answer(' Bytes = 6000 - 99999 ')).toEqual({ kind: 'serve', status: 206, start: 6000, end: 7000 });
  });
});

describe('firstMissing: where the player needs bytes next', () => {
  it('is the end of the stored run holding the position, or the position itself', () => {
    expect(firstMissing(stored, 100, size)).toBe(3000);
    expect(firstMissing(stored, 4000, size)).toBe(4000);
    expect(firstMissing(stored, 6000, size)).toBe(8000);
    expect(firstMissing([{ start: 0, end: size }], 5000, size)).toBeUndefined();
    expect(firstMissing([{ start: 4000, end: size }], 4000, size)).toBeUndefined();
  });
});
