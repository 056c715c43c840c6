import { afterEach, describe, expect, it } from 'vitest';
import type { DropReason, JobNotice, RestartCause } from '../../../src/engine/notice';
import { englishNotice } from '../../../src/engine/notice';
import { dropText, noticeText, restartText } from '../../../src/pages-shared/failure-text';
import { speak } from './fixtures';

afterEach(() => {
  delete (globalThis as { chrome?: unknown }).chrome;
});

const CAUSES: Record<RestartCause['kind'], RestartCause> = {
  changed: { kind: 'changed', change: { what: 'etag', from: '"a"', to: '"b"' } },
  'past-end': { kind: 'past-end' },
  'ranges-ignored': { kind: 'ranges-ignored' },
  'no-resume': { kind: 'no-resume' },
  'broke-no-resume': { kind: 'broke-no-resume' },
  encoding: { kind: 'encoding', encoding: 'gzip' },
  'sizes-differ': { kind: 'sizes-differ', mirrors: 4 * 1024 * 1024, primary: 5 * 1024 * 1024 },
};

const DROPS: Record<DropReason['kind'], DropReason> = {
  'other-size': { kind: 'other-size', size: 1000, expected: 1001 },
  'other-bytes': { kind: 'other-bytes', at: 65536, primary: 'https://origin.example/f.iso' },
  restart: { kind: 'restart', cause: { kind: 'ranges-ignored' } },
  'other-digest': { kind: 'other-digest' },
  'bad-piece': { kind: 'bad-piece', piece: 7 },
  'plain-http': { kind: 'plain-http' },
  'retry-later': { kind: 'retry-later', seconds: 120, status: 503 },
  failed: { kind: 'failed', failure: { code: 'network', network: 'refused', attempts: 3 }, message: 'gave up after 3 attempts' },
};

const NOTICES: Record<JobNotice['kind'], JobNotice> = {
  restarted: { kind: 'restarted', cause: CAUSES.changed },
  dropped: { kind: 'dropped', url: 'https://m1.example:8080/pub/f.iso', primary: false, why: DROPS['other-bytes'] },
  'not-used': { kind: 'not-used', url: 'http://m2.example/f.iso', why: DROPS['plain-http'] },
  'sources-refused': { kind: 'sources-refused', from: 'server', count: 2, first: 'http://10.0.0.1/f is on a local network' },
  'metalink-unread': { kind: 'metalink-unread', message: 'the Metalink file is not XML' },
  'more-mirrors': { kind: 'more-mirrors', from: 'metalink', count: 40, kept: 31, max: 32 },
  'piece-failed': { kind: 'piece-failed', piece: 3, start: 0, end: 1024 },
  'pieces-misfit': { kind: 'pieces-misfit', count: 9, size: 100 },
  reverifying: { kind: 'reverifying', ranges: 4, url: 'https://origin.example/f.iso' },
  replaced: { kind: 'replaced', mirror: 'https://m1.example/f.iso', url: 'https://origin.example/f.iso' },
};

/** Fixed words of the engine's English sentences (notice.ts, errors): none may reach a German page. */
const ENGLISH = /\b(the server|answered|changed|mirror|dropped|ignored|restarted|serves|bytes than|piece|Stitch stopped|file)\b/i;

const all = () => [
  ...Object.values(CAUSES).map(restartText),
  ...Object.values(DROPS).map(dropText),
  ...Object.values(NOTICES).map(noticeText),
];

describe('the engine’s notices in words', () => {
  it('say each kind in English, addresses shortened to their host', () => {
    expect(noticeText(NOTICES.dropped)).toBe(
      'Stitch stopped using the mirror m1.example:8080. It serves other bytes than origin.example (the first difference is at byte 65,536). Your file is not affected.',
    );
    expect(noticeText(NOTICES.restarted)).toBe(
      'The file changed on the server (its ETag changed). Stitch started the download again from the beginning.',
    );
    expect(noticeText({ kind: 'dropped', url: 'https://o.example/f', primary: true, why: DROPS['retry-later'] })).toBe(
      'Stitch stopped using the server o.example and continues from the mirrors. The server is busy or down for maintenance (error 503). It asked to try again only after 120 s. Your file is not affected.',
    );
    expect(noticeText(NOTICES['more-mirrors'])).toBe(
      'The Metalink file named more mirrors: 40. Stitch uses 31 of them (at most 32 addresses per file).',
    );
    expect(dropText(DROPS.failed)).toBe('The server refused the connection. Stitch gave up after 3 attempts.');
    expect(dropText(DROPS['other-size'])).toBe('It serves a file of 1,000 B, not 1,001 B.');
    expect(restartText({ kind: 'changed', change: { what: 'size', from: 1024 * 1024, to: 2 * 1024 * 1024 } })).toBe(
      'The file changed on the server (its size went from 1 MB to 2 MB).',
    );
    for (const text of all()) expect(text).toMatch(/^\S.*[.)]$/);
  });

  it('say each kind in German, with no English word of the engine’s', () => {
    const english = all();
    speak('de');
    const german = all();
    german.forEach((text, i) => {
      expect(text, english[i]).not.toBe(english[i]);
      expect(text, text).not.toMatch(ENGLISH);
    });
    expect(noticeText(NOTICES.dropped)).toBe(
      'Stitch verwendet den Spiegelserver m1.example:8080 nicht mehr. Er liefert andere Bytes als origin.example (der erste Unterschied liegt bei Byte 65.536). Ihre Datei ist davon nicht betroffen.',
    );
    expect(dropText(DROPS['retry-later'])).toBe(
      'Der Server ist ausgelastet oder wird gewartet (Fehler 503). Er bat, es erst nach 120 s erneut zu versuchen.',
    );
  });

  it('show an older version’s English notice as it is, made a sentence', () => {
    speak('de');
    expect(noticeText('mirror http://127.0.0.1:1/f.bin was dropped: it answered 404')).toBe(
      'Mirror 127.0.0.1:1 was dropped: it answered 404.',
    );
  });

  it('keep the CLI’s English sentences', () => {
    expect(englishNotice(NOTICES.dropped)).toBe(
      'mirror https://m1.example:8080/pub/f.iso was dropped: it serves different bytes than https://origin.example/f.iso (first difference at byte 65536)',
    );
    expect(englishNotice(NOTICES.restarted)).toBe('the file changed on the server (its ETag changed from "a" to "b"); restarted from zero');
    expect(englishNotice('an older notice')).toBe('an older notice');
  });
});
