import { afterEach, describe, expect, test } from 'vitest';
import { LocalNetworkRules } from '../../../src/background/network/local-network-rules';
import { testMirrorRule } from '../../../src/background/ui/mirror-test';
import type { ProbeResult } from '../../../src/background/takeover/probe';
import { FakeBrowser } from '../../support/fake-browser';
import { speak } from '../pages/fixtures';

const rule = {
  pattern: 'example.com/pub/',
  mirrors: ['https://m1.example.org/pub/', 'https://m2.example.org/'],
  passQuery: false,
  sendCookies: false,
};

/** Answers every URL with the same size, recording how each was asked. */
function recordingProbe() {
  const asked: [string, RequestCredentials][] = [];
  const probe = async (url: string, credentials: RequestCredentials): Promise<ProbeResult> => {
    asked.push([url, credentials]);
    return { status: 206, statusText: 'Partial Content', size: 1000 };
  };
  return { asked, probe };
}

describe('testing a mirror rule', () => {
  afterEach(() => {
    delete (globalThis as { chrome?: unknown }).chrome;
  });

  test("says each answer in the user's language, with the status code and not its English text", async () => {
    speak('de');
    const answers: Record<string, ProbeResult> = {
      'https://example.com/pub/a.iso': { status: 206, statusText: 'Partial Content', size: 1_000_000 },
      'https://m1.example.org/pub/a.iso': { status: 200, statusText: 'OK', size: 1_000_000 },
      'https://m2.example.org/a.iso': { status: 404, statusText: 'Not Found' },
    };
    const reply = await testMirrorRule(rule, 'https://example.com/pub/a.iso', async (url) => answers[url]!);
    expect([reply.original.message, ...reply.mirrors.map((m) => m.message)]).toEqual([
      'Größe: 1.000.000 Byte.',
      'Gleiche Größe: 1.000.000 Byte. Er kann keine Teile der Datei senden (keine Range-Unterstützung).',
      'Antwortete mit Fehler 404.',
    ]);
    await expect(testMirrorRule(rule, 'https://other.example/a.iso', async (url) => answers[url]!)).rejects.toThrow(
      'Die Beispiel-URL passt nicht zum Muster example.com/pub/.',
    );
  });

  test('asks the mirrors as downloads will: without cookies and without the query, unless the rule says so', async () => {
    const { asked, probe } = recordingProbe();
    const reply = await testMirrorRule(rule, 'https://example.com/pub/a.iso?token=secret', probe);
    expect(reply.mirrors.every((m) => m.ok)).toBe(true);
    expect(asked).toEqual([
      ['https://example.com/pub/a.iso?token=secret', 'include'],
      ['https://m1.example.org/pub/a.iso', 'omit'],
      ['https://m2.example.org/a.iso', 'omit'],
    ]);
  });

  test('with cookies and the query when the rule passes them', async () => {
    const { asked, probe } = recordingProbe();
    await testMirrorRule({ ...rule, passQuery: true, sendCookies: true }, 'https://example.com/pub/a.iso?token=secret', probe);
    expect(asked.slice(1)).toEqual([
      ['https://m1.example.org/pub/a.iso?token=secret', 'include'],
      ['https://m2.example.org/a.iso?token=secret', 'include'],
    ]);
  });

  test('on a local sample URL, its local mirrors may be reached while the test runs, as its downloads may', async () => {
    const browser = new FakeBrowser();
    const local = new LocalNetworkRules(browser);
    const allowedDuring: (string | null | undefined)[][] = [];
    const probe = async (): Promise<ProbeResult> => {
      allowedDuring.push(browser.rules.filter((r) => r.action.type === 'allow').map((r) => r.condition.urlFilter));
      return { status: 206, statusText: 'Partial Content', size: 1000 };
    };
    const intranet = { ...rule, pattern: 'http://192.168.1.10/pub/', mirrors: ['http://192.168.1.11/pub/', 'https://m.example.org/'] };
    await testMirrorRule(intranet, 'http://192.168.1.10/pub/a.iso', probe, local);
    expect(allowedDuring[0]).toEqual(['|http://192.168.1.10/', '|http://192.168.1.11/']);
    await local.allow('later', 'https://example.com/'); // waits for the release queued
    expect(browser.rules.filter((r) => r.action.type === 'allow')).toEqual([]);
    // A public sample URL: its local mirror stays out of reach, as it would for its downloads.
    allowedDuring.length = 0;
    await testMirrorRule({ ...rule, mirrors: ['http://192.168.1.11/pub/'] }, 'https://example.com/pub/a.iso', probe, local);
    expect(allowedDuring).toEqual([[], []]);
  });
});
