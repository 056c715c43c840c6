import { describe, expect, test } from 'vitest';
import type { SessionRule } from '../../../src/background/browser-api';
import { ReferrerRules, refererRule, refererValue, urlFilterFor } from '../../../src/background/network/referrer-rules';
import { FakeBrowser } from '../../support/fake-browser';

const URL_A = 'https://dl.example.com/files/big.iso?token=abc';
const PAGE = 'https://www.example.com/downloads';
/** What browsers send from PAGE to another origin. */
const SENT = 'https://www.example.com/';

describe('referrer rule parts', () => {
  test('the filter is the exact URL, anchored, without its fragment; only http(s)', () => {
    expect(urlFilterFor(URL_A)).toBe('|https://dl.example.com/files/big.iso?token=abc|');
    expect(urlFilterFor('http://127.0.0.1:8080/a#part')).toBe('|http://127.0.0.1:8080/a|');
    // As fetch sends it: punycode host, percent-encoded path.
    expect(urlFilterFor('https://bücher.example/ä b')).toBe('|https://xn--bcher-kva.example/%C3%A4%20b|');
    // Filter syntax inside the URL stands for one separator character.
    expect(urlFilterFor('https://e.com/a*b^c|d')).toBe('|https://e.com/a^b^c^d|');
    expect(urlFilterFor('ftp://e.com/x')).toBeUndefined();
    expect(urlFilterFor('blob:https://e.com/1')).toBeUndefined();
    expect(urlFilterFor('not a url')).toBeUndefined();
  });

  test('the Referer is what a browser sends by default: the page to its origin, its origin elsewhere, none on a downgrade', () => {
    const file = 'https://www.example.com/files/a.iso';
    expect(refererValue(PAGE, file)).toBe(PAGE);
    expect(refererValue('https://user:pw@www.example.com/p?q=1#top', file)).toBe('https://www.example.com/p?q=1');
    expect(refererValue('https://www.example.com/p?q=1#top', URL_A)).toBe('https://www.example.com/');
    expect(refererValue('http://www.example.com/p', URL_A)).toBe('http://www.example.com/');
    expect(refererValue('https://www.example.com/p', 'http://dl.example.com/a.iso')).toBeUndefined();
    expect(refererValue('https://www.example.com/p', 'http://127.0.0.1:8080/a.iso')).toBe('https://www.example.com/');
    expect(refererValue('https://www.example.com/p', 'http://localhost:8080/a.iso')).toBe('https://www.example.com/');
    expect(refererValue('chrome-extension://abc/popup.html', file)).toBeUndefined();
    expect(refererValue('about:blank', file)).toBeUndefined();
    expect(refererValue('', file)).toBeUndefined();
    expect(refererValue(undefined, file)).toBeUndefined();
    expect(refererValue(PAGE, 'not a url')).toBeUndefined();
  });
});

describe('ReferrerRules', () => {
  test('a hold adds one session rule scoped to Stitch’s own fetches of that URL; release removes it', async () => {
    const browser = new FakeBrowser();
    const rules = new ReferrerRules(browser);
    await rules.hold('job-1', URL_A, PAGE);
    expect(browser.rules).toEqual([
      {
        id: 1,
        priority: 3, // above the allow rules of local addresses, which would cancel it
        condition: {
          urlFilter: '|https://dl.example.com/files/big.iso?token=abc|',
          isUrlFilterCaseSensitive: true,
          tabIds: [-1],
          resourceTypes: ['xmlhttprequest'],
        },
        action: { type: 'modifyHeaders', requestHeaders: [{ header: 'referer', operation: 'set', value: SENT }] },
      },
    ]);
    await rules.release('job-1');
    expect(browser.rules).toEqual([]);
    expect(browser.calls).toEqual(['rules +1', 'rules -1']);
  });

  test('nothing is set without an http(s) referrer or URL', async () => {
    const browser = new FakeBrowser();
    const rules = new ReferrerRules(browser);
    await rules.hold('a', URL_A, undefined);
    await rules.hold('b', URL_A, 'chrome-extension://x/popup.html');
    await rules.hold('c', 'data:text/plain,x', PAGE);
    await rules.release('d');
    expect(browser.calls).toEqual([]);
  });

  test('owners of the same URL and referrer share one rule, kept until the last releases it', async () => {
    const browser = new FakeBrowser();
    const rules = new ReferrerRules(browser);
    await rules.hold('takeover:7', URL_A, PAGE);
    await rules.hold('job-1', URL_A, PAGE);
    await rules.release('takeover:7');
    expect(browser.rules.map((r) => r.id)).toEqual([1]);
    await rules.release('job-1');
    expect(browser.rules).toEqual([]);
    expect(browser.calls).toEqual(['rules +1', 'rules -1']);
  });

  test('one URL held with two Referers makes one rule, with the Referer of the owner that has held it longest', async () => {
    const browser = new FakeBrowser();
    const rules = new ReferrerRules(browser);
    const referers = () => browser.rules.map((r) => [r.id, r.condition.urlFilter, r.action.requestHeaders![0]!.value]);
    await rules.hold('job-1', URL_A, PAGE);
    // The same file from another page: job-1's requests keep their Referer, and job-2's get it too.
    await rules.hold('job-2', URL_A, 'https://other.example/page');
    expect(referers()).toEqual([[1, urlFilterFor(URL_A), SENT]]);
    expect(browser.calls).toEqual(['rules +1']);
    // Once job-1 lets go, job-2's own Referer applies.
    await rules.release('job-1');
    expect(referers()).toEqual([[2, urlFilterFor(URL_A), 'https://other.example/']]);
    // An owner that changes its Referer holds anew: it is the newest.
    await rules.hold('job-3', URL_A, PAGE);
    await rules.hold('job-2', URL_A, 'https://third.example/');
    expect(referers()).toEqual([[1, urlFilterFor(URL_A), SENT]]);
    expect(browser.rules.every((r) => r.priority === 3)).toBe(true);
    await Promise.all([rules.release('job-2'), rules.release('job-3')]);
    expect(browser.rules).toEqual([]);
  });

  test('other URLs keep their own rules beside it', async () => {
    const browser = new FakeBrowser();
    const rules = new ReferrerRules(browser);
    const URL_B = 'https://dl.example.com/files/other.iso';
    await Promise.all([rules.hold('job-1', URL_A, PAGE), rules.hold('job-2', URL_B, 'https://other.example/page')]);
    expect(browser.rules.map((r) => [r.condition.urlFilter, r.action.requestHeaders![0]!.value])).toEqual([
      [urlFilterFor(URL_A), SENT],
      [urlFilterFor(URL_B), 'https://other.example/'],
    ]);
  });

  test('a hand-over within one turn (release, then hold again) does not touch the rules', async () => {
    const browser = new FakeBrowser();
    const rules = new ReferrerRules(browser);
    await rules.hold('job-1', URL_A, PAGE);
    const released = rules.release('job-1');
    const held = rules.hold('job-1', URL_A, PAGE);
    await Promise.all([released, held]);
    expect(browser.calls).toEqual(['rules +1']);
  });

  test('many holds at once get distinct small ids, never colliding', async () => {
    const browser = new FakeBrowser();
    const rules = new ReferrerRules(browser);
    await Promise.all(Array.from({ length: 20 }, (_, i) => rules.hold(`job-${i}`, `${URL_A}&n=${i}`, PAGE)));
    expect(browser.rules.map((r) => r.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? rules.release(`job-${i}`) : rules.hold(`job-x${i}`, `${URL_A}&x=${i}`, PAGE))),
    );
    const ids = browser.rules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(browser.rules).toHaveLength(20);
    expect(Math.max(...ids)).toBeLessThanOrEqual(30);
  });

  test('a sync removes rules nobody holds (left by a previous worker) and avoids their ids meanwhile', async () => {
    const browser = new FakeBrowser();
    const stale = { id: 1, ...refererRule({ urlFilter: '|https://gone.example/x|', referer: PAGE }) };
    const foreign: SessionRule = {
      id: 3,
      condition: { urlFilter: '|https://dl.example.com/files/big.iso?token=abc|' },
      action: { type: 'block' },
    };
    browser.rules = [stale, foreign];
    const rules = new ReferrerRules(browser);
    await rules.hold('job-1', URL_A, PAGE);
    expect(browser.calls).toEqual(['rules -1 -3 +2']);
    expect(browser.rules.map((r) => [r.id, r.condition.urlFilter])).toEqual([[2, urlFilterFor(URL_A)]]);
    await rules.sync();
    expect(browser.calls).toHaveLength(1); // in place already: nothing to do
  });

  test('a rule already in place (the worker restarted) is kept, not added again', async () => {
    const browser = new FakeBrowser();
    const before = new ReferrerRules(browser);
    await before.hold('job-1', URL_A, PAGE);
    const after = new ReferrerRules(browser);
    await after.hold('job-1', URL_A, PAGE);
    expect(browser.calls).toEqual(['rules +1']);
    await after.release('job-1');
    expect(browser.rules).toEqual([]);
  });

  test('a rule the browser refuses keeps neither the others out nor the caller waiting', async () => {
    const browser = new FakeBrowser();
    const update = browser.sessionRules.update;
    browser.sessionRules.update = async (change) => {
      if (change.addRules?.some((r) => r.condition.urlFilter?.includes('bad'))) throw new Error('invalid rule');
      return update(change);
    };
    const rules = new ReferrerRules(browser);
    await Promise.all([rules.hold('bad', 'https://e.com/bad', PAGE), rules.hold('good', URL_A, PAGE)]);
    expect(browser.rules.map((r) => r.condition.urlFilter)).toEqual([urlFilterFor(URL_A)]);
  });

  test('without the API (not granted) holds do nothing and never fail', async () => {
    const browser = new FakeBrowser();
    const api = { ...browser, sessionRules: undefined };
    const rules = new ReferrerRules(api);
    await rules.hold('job-1', URL_A, PAGE);
    await rules.sync();
    await rules.release('job-1');
    expect(browser.calls).toEqual([]);
  });
});
