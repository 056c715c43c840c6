import { afterEach, describe, expect, it } from 'vitest';
import { relinkMismatchText } from '../../../src/pages-shared/job-text';
import { speak } from './fixtures';

afterEach(() => {
  delete (globalThis as { chrome?: unknown }).chrome;
});

describe('why a new link cannot continue a download', () => {
  it('counts sizes as the row does (1 MB = 1,048,576 bytes), in bytes only where MB would not show the difference', () => {
    expect(relinkMismatchText({ kind: 'size', size: 48 * 2 ** 20, expected: Math.round(50.3 * 2 ** 20) })).toBe(
      'The new link serves 48 MB, not the 50.3 MB of this download.',
    );
    expect(relinkMismatchText({ kind: 'size', size: 4 * 2 ** 20 + 1, expected: 4 * 2 ** 20 })).toBe(
      'The new link serves 4,194,305 bytes, not the 4,194,304 bytes of this download.',
    );
    expect(relinkMismatchText({ kind: 'bytes', at: 1.75 * 2 ** 20 })).toBe(
      'The new link sends other bytes at 1.8 MB than the ones stored.',
    );
  });

  it('is German in a German browser', () => {
    speak('de');
    expect(relinkMismatchText({ kind: 'size', expected: 10 * 2 ** 20 })).toBe(
      'Der neue Link liefert eine Datei unbekannter Größe, nicht die 10 MB dieses Downloads.',
    );
    expect(relinkMismatchText({ kind: 'status', status: 200 })).toBe(
      'Der neue Link antwortete mit 200, statt einen Teil der Datei zu senden.',
    );
  });
});
