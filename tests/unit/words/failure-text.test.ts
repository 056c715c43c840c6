import { afterEach, describe, expect, it } from 'vitest';
import { failureText, retryingText } from '../../../src/words/failure-text';
import { speak } from '../pages/fixtures';

afterEach(() => {
  delete (globalThis as { chrome?: unknown }).chrome;
});

describe('failure words', () => {
  it('say what the server answered once, the attempt, and when Stitch gives up', () => {
    expect(retryingText({ attempts: 6, maxAttempts: 8, failure: { code: 'http-status', status: 503 } })).toBe(
      'The server is busy or down for maintenance (error 503). Attempt 6 of 8 failed; Stitch tries again by itself and gives up after attempt 8.',
    );
    expect(failureText({ code: 'http-status', status: 503, attempts: 8 })).toBe(
      'The server is busy or down for maintenance (error 503). Stitch gave up after 8 attempts.',
    );
    expect(failureText({ code: 'http-status', status: 429 })).toBe(
      'The server turns requests away for now: it has had too many (error 429).',
    );
  });

  it('say the time of the next try when it is a minute or more away (a server asked to wait)', () => {
    const retryAt = new Date(2026, 10, 28, 14, 5).getTime(); // local time: the same words in every time zone
    const retrying = { attempts: 1, maxAttempts: 8, retryAt, failure: { code: 'http-status', status: 503 } } as const;
    expect(retryingText(retrying, retryAt - 120_000)).toBe(
      'The server is busy or down for maintenance (error 503). Attempt 1 of 8 failed; Stitch tries again at 2:05 PM and gives up after attempt 8.',
    );
    expect(retryingText(retrying, retryAt - 30_000)).toBe(
      'The server is busy or down for maintenance (error 503). Attempt 1 of 8 failed; Stitch tries again by itself and gives up after attempt 8.',
    );
    speak('de');
    expect(retryingText(retrying, retryAt - 120_000)).toBe(
      'Der Server ist ausgelastet oder wird gewartet (Fehler 503). Versuch 1 von 8 ist fehlgeschlagen; Stitch versucht es um 14:05 erneut und gibt nach Versuch 8 auf.',
    );
  });

  it('say plainly that the server could not be reached, not what fetch said', () => {
    expect(failureText({ code: 'network', network: 'unreached', attempts: 8 })).toBe(
      'Stitch could not reach the server: the connection was refused or broke before the server answered. Stitch gave up after 8 attempts.',
    );
    expect(failureText({ code: 'network', network: 'refused' })).toBe('The server refused the connection.');
    expect(failureText({ code: 'network', network: 'reset' })).toBe('The connection to the server was reset.');
  });

  it('are all German in a German browser', () => {
    speak('de');
    expect(retryingText({ attempts: 2, maxAttempts: 8, failure: { code: 'http-status', status: 503 } })).toBe(
      'Der Server ist ausgelastet oder wird gewartet (Fehler 503). Versuch 2 von 8 ist fehlgeschlagen; Stitch versucht es selbst erneut und gibt nach Versuch 8 auf.',
    );
    expect(failureText({ code: 'network', network: 'unreached', attempts: 8 })).toBe(
      'Stitch konnte den Server nicht erreichen: Die Verbindung wurde abgelehnt oder brach ab, bevor der Server antwortete. Stitch hat nach 8 Versuchen aufgegeben.',
    );
    expect(failureText({ code: 'verify' })).toBe(
      'Die fertige Datei passt nicht zu ihrer erwarteten Größe oder Prüfsumme; deshalb hat Stitch sie nicht gespeichert.',
    );
  });

  it('name every code the engine and the background report', () => {
    expect(failureText({ code: 'http-status', status: 418 })).toBe('The server answered with error 418.');
    const codes = [
      'network',
      'redirect',
      'changed',
      'no-ranges',
      'bad-range',
      'bad-length',
      'encoding',
      'protocol',
      'storage-full',
      'storage',
      'verify',
      'save-failed',
      'internal',
    ];
    for (const code of codes) expect(failureText({ code }), code).not.toBe('The reason is not known.');
  });
});
