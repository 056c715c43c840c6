import { afterEach, describe, expect, it } from 'vitest';
import type { DropReason, JobNotice, RestartCause } from '../../../src/engine/notice';
import { englishNotice } from '../../../src/engine/notice';
import type { ConnectionsWhy } from '../../../src/engine/scheduler/connections/connection-count';
import { connectionsWhyText, dropText, noticeText, restartText } from '../../../src/words/failure-text';
import { speak } from '../pages/fixtures';

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

const WHYS: Record<ConnectionsWhy['kind'], ConnectionsWhy> = {
  starting: { kind: 'starting', count: 2 },
  'far-start': { kind: 'far-start', count: 8, ms: 150.4, answered: true },
  'near-after-all': { kind: 'near-after-all', ms: 20 },
  'step-unconfirmed': { kind: 'step-unconfirmed', from: 2, to: 4, gain: 0.83 },
  step: { kind: 'step', from: 4, to: 8, gain: { kind: 'shared', server: 0.6, download: 0.0125 }, next: 6 },
  'one-more-short': { kind: 'one-more-short', count: 10, gain: { kind: 'small', server: 0.06 } },
  'each-pays': { kind: 'each-pays', count: 1 },
  'gave-back': { kind: 'gave-back', removed: 3 },
  'at-max': { kind: 'at-max', count: 16 },
  'at-server-limit': { kind: 'at-server-limit', count: 4 },
  'ends-before-warm': { kind: 'ends-before-warm', count: 8 },
  'server-allows': { kind: 'server-allows', count: 2, status: 503 },
  refused: { kind: 'refused', waitMs: 1_500 },
};

/** The English of the connection count's reasons (and of the engine's words for it before): none may reach a German page. */
const CONNECTIONS_ENGLISH =
  /\b(connections?|starts?|starting|stays?|steady|went|tries|trying|raised|rate|allows?|answer\w*|closed|waits?|waiting|only|the|that|far|away)\b/i;

describe('why a server has the connections it has, in words', () => {
  it('says each kind in English', () => {
    const english = Object.fromEntries(Object.entries(WHYS).map(([kind, why]) => [kind, connectionsWhyText(why)]));
    expect(english).toEqual({
      starting: 'Stitch starts with 2 connections.',
      'far-start': 'The server is 150 ms away, so Stitch starts with 8 connections.',
      'near-after-all': 'The server answers in 20 ms after all, so Stitch tries fewer connections.',
      'step-unconfirmed': 'Stitch went from 2 to 4 connections and measures again before the next step. That raised the rate by 83%.',
      step: "Stitch went from 4 to 8 connections and now tries 6. That raised this server's rate by 60%, but the whole download's only by 1%: the servers share one line.",
      'one-more-short': 'Stitch stays at 10 connections: one more did not pay. That raised the rate by only 6%.',
      'each-pays': 'Stitch stays at 1 connection: each of them raises the rate.',
      'gave-back': 'Stitch gave back 3 connections: the rate held without.',
      'at-max': 'Stitch uses 16 connections, the most allowed.',
      'at-server-limit': 'Stitch uses 4 connections, the most this server allows.',
      'ends-before-warm': 'Stitch stays at 8 connections: the download would end before more were up to speed.',
      'server-allows': 'The server allows only 2 connections. It answered one more with error 503.',
      refused: 'The server closed a new connection before answering. Stitch waits 1.5 s before trying again.',
    });
    expect(connectionsWhyText({ kind: 'far-start', count: 8, ms: 125, answered: false })).toBe(
      'The server has not answered after 125 ms, so Stitch starts with 8 connections.',
    );
    expect(connectionsWhyText({ kind: 'refused', status: 429, waitMs: 3_000 })).toBe(
      'The server turns requests away for now: it has had too many (error 429). Stitch waits 3 s before trying again.',
    );
  });

  it('says each kind in German, with no English word', () => {
    const variants: ConnectionsWhy[] = [
      ...Object.values(WHYS),
      { kind: 'far-start', count: 8, ms: 125, answered: false },
      { kind: 'step', from: 2, to: 4, gain: { kind: 'enough', server: 1 }, next: 8 },
      { kind: 'server-allows', count: 3 },
      { kind: 'refused', status: 503, waitMs: 2_000 },
    ];
    const english = variants.map(connectionsWhyText);
    speak('de');
    variants.forEach((why, i) => {
      const german = connectionsWhyText(why);
      expect(german, english[i]).not.toBe(english[i]);
      expect(german, german).not.toMatch(CONNECTIONS_ENGLISH);
      expect(german, german).toMatch(/^\S.*\.$/);
    });
    expect(connectionsWhyText(WHYS.step)).toBe(
      'Stitch ist von 4 auf 8 Verbindungen gegangen und versucht jetzt 6. Das hat die Geschwindigkeit dieses Servers um 60\u00a0% erhöht, die des ganzen Downloads aber nur um 1\u00a0%: Die Server teilen sich eine Leitung.',
    );
    expect(connectionsWhyText(WHYS.refused)).toBe(
      'Der Server hat eine neue Verbindung vor der Antwort geschlossen. Stitch wartet 1,5 s bis zum nächsten Versuch.',
    );
  });
});
