import { describe, expect, test } from 'vitest';
import type { BrowserDownload } from '../../../src/background/browser-api';
import { PostTracker } from '../../../src/background/network/post-tracker';
import type { ProbeResult } from '../../../src/background/takeover/probe';
import { ReferrerRules } from '../../../src/background/network/referrer-rules';
import { takeOver } from '../../../src/background/takeover/takeover';
import { afterProbe, firstLook, takeoverCredentials } from '../../../src/background/takeover/takeover-rules';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../../src/settings/schema';
import { Bypass } from '../../../src/background/takeover/bypass';
import { BROWSER_MENU_ID, browserFromClick, LEAVE_SITE_MENU_ID } from '../../../src/background/ui/context-menu';
import { SettingsStore } from '../../../src/background/settings-store';
import { FakeBrowser } from '../../support/fake-browser';

const settings = (change: Partial<Settings> = {}) => parseSettings({ ...DEFAULT_SETTINGS, ...change });
const big = (over: Partial<BrowserDownload> = {}): BrowserDownload => ({
  id: 1,
  url: 'https://example.com/big.iso',
  mime: 'application/octet-stream',
  totalBytes: 100_000_000,
  state: 'in_progress',
  ...over,
});
const ok = (size = 100_000_000): ProbeResult => ({
  status: 206,
  statusText: 'Partial Content',
  size,
  contentType: 'application/octet-stream',
});

describe('take-over rules', () => {
  test('large and unknown-size downloads are probed; small ones stay silently', () => {
    expect(firstLook(big(), settings(), 'me', false)).toBe('probe');
    expect(firstLook(big({ totalBytes: 0 }), settings(), 'me', false)).toBe('probe');
    expect(firstLook(big({ totalBytes: 1000 }), settings(), 'me', false)).toEqual({ take: false });
  });

  test('our own saves, take-over off, excluded types and sites are left alone without a notice', () => {
    expect(firstLook(big({ byExtensionId: 'me' }), settings(), 'me', false)).toEqual({ take: false });
    expect(firstLook(big(), settings({ takeover: false }), 'me', false)).toEqual({ take: false });
    expect(firstLook(big({ mime: 'video/mp4' }), settings({ excludedTypes: ['video/*'] }), 'me', false)).toEqual({ take: false });
    expect(firstLook(big({ url: 'https://dl.example.com/x' }), settings({ excludedSites: ['example.com'] }), 'me', false)).toEqual({
      take: false,
    });
  });

  test('downloads of private windows are left to the browser', () => {
    expect(firstLook(big({ incognito: true }), settings(), 'me', false)).toEqual({ take: false });
    expect(firstLook(big({ incognito: false }), settings(), 'me', false)).toBe('probe');
  });

  test("cookies only when the page is on the file's own host and scheme; none when unsure", () => {
    expect(takeoverCredentials('https://example.com/big.iso', 'https://example.com/downloads/')).toBe('include');
    expect(takeoverCredentials('http://127.0.0.1:8080/big.iso', 'http://127.0.0.1:9090/')).toBe('include');
    expect(takeoverCredentials('http://127.0.0.1:8080/big.iso', 'http://localhost:8080/')).toBe('omit');
    expect(takeoverCredentials('https://dl.example.com/big.iso', 'https://www.example.com/')).toBe('omit');
    expect(takeoverCredentials('https://example.com/big.iso', 'http://example.com/')).toBe('omit');
    expect(takeoverCredentials('https://example.com/big.iso', undefined)).toBe('omit');
    expect(takeoverCredentials('https://example.com/big.iso', '')).toBe('omit');
  });

  test('blob:, data: and POST downloads stay with the browser, with a notice', () => {
    expect(firstLook(big({ url: 'blob:https://a/1' }), settings(), 'me', false)).toMatchObject({
      take: false,
      notice: expect.stringMatching(/blob/),
    });
    expect(firstLook(big({ url: 'data:application/zip;base64,AA' }), settings(), 'me', false)).toMatchObject({
      notice: expect.stringMatching(/data/),
    });
    expect(firstLook(big(), settings(), 'me', true)).toMatchObject({ take: false, notice: expect.stringMatching(/POST/) });
  });

  test("extensions' own blob: saves (Stitch's included) are left alone silently", () => {
    expect(firstLook(big({ url: 'blob:chrome-extension://abcdef/0f1e' }), settings(), 'me', false)).toEqual({ take: false });
    expect(firstLook(big({ url: 'blob:moz-extension://1234-5678/0f1e' }), settings(), 'me', false)).toEqual({ take: false });
    // Chrome's streamed save: a frame's navigation to the worker's save route, not marked as the extension's.
    expect(firstLook(big({ url: 'chrome-extension://abcdef/save/j1?at=1' }), settings(), 'me', false)).toEqual({ take: false });
  });

  test.each([401, 403, 410])('a re-request answered %i is left to the browser with a notice', (status) => {
    expect(afterProbe(big(), { status, statusText: 'No' }, settings())).toMatchObject({
      take: false,
      notice: expect.stringContaining(String(status)),
    });
  });

  test('a re-request that gets another size or a web page is left to the browser', () => {
    expect(afterProbe(big(), ok(5), settings())).toMatchObject({ take: false, notice: expect.stringMatching(/different file/) });
    expect(afterProbe(big(), { ...ok(), contentType: 'text/html' }, settings())).toMatchObject({
      take: false,
      notice: expect.stringMatching(/web page/),
    });
    expect(afterProbe(big({ totalBytes: 0 }), ok(1000), settings())).toEqual({ take: false });
    expect(afterProbe(big(), ok(), settings())).toEqual({ take: true });
  });
});

describe('takeOver', () => {
  function deps(browser: FakeBrowser, probe: ProbeResult, posts = new PostTracker()) {
    const added: unknown[] = [];
    const notices: string[] = [];
    return {
      added,
      notices,
      deps: {
        api: browser,
        settings: async () => settings(),
        posts,
        add: async (d: unknown) => void added.push(d),
        notice: async (m: string) => void notices.push(m),
        mirrorsFor: (url: string) => [`https://mirror.example.org/${url.split('/').pop()}`],
        probe: async () => probe,
      },
    };
  }

  test('cancels and erases the browser copy, then starts the job with referrer, mirrors and what the probe learned', async () => {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload({
      url: 'https://example.com/big.iso',
      referrer: 'https://example.com/page',
      totalBytes: 100_000_000,
    });
    const { deps: d, added } = deps(browser, { ...ok(), filename: 'report 7.pdf' });
    expect(await takeOver(item, d)).toBe('taken');
    expect(browser.calls).toEqual([`cancel ${item.id}`, `erase ${item.id}`]);
    expect(added).toEqual([
      {
        url: 'https://example.com/big.iso',
        referrer: 'https://example.com/page',
        credentials: 'include',
        mirrors: ['https://mirror.example.org/big.iso'],
        takenOver: true,
        probed: { filename: 'report 7.pdf', size: 100_000_000 },
      },
    ]);
  });

  test('a link from another site is probed and fetched without cookies, as the browser withheld its strict ones', async () => {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload({
      url: 'https://files.example.net/big.iso',
      referrer: 'https://example.com/',
      totalBytes: 100_000_000,
    });
    const { deps: d, added } = deps(browser, ok());
    const probed: unknown[] = [];
    expect(await takeOver(item, { ...d, probe: async (url, init) => (probed.push({ url, ...init }), ok()) })).toBe('taken');
    expect(probed).toEqual([{ url: 'https://files.example.net/big.iso', referrer: 'https://example.com/', credentials: 'omit' }]);
    expect(added).toMatchObject([{ url: 'https://files.example.net/big.iso', credentials: 'omit' }]);
  });

  test('a link from another site to a file that needs cookies stays with the browser, saying why', async () => {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload({
      url: 'https://files.example.net/big.iso',
      referrer: 'https://example.com/',
      totalBytes: 100_000_000,
    });
    const { deps: d, added, notices } = deps(browser, { status: 403, statusText: 'Forbidden' });
    expect(await takeOver(item, d)).toBe('left');
    expect(browser.calls).toEqual([]);
    expect(added).toEqual([]);
    expect(notices[0]).toBe(
      'Left to the browser: the server refused a request without cookies (error 403), and the browser sent none Stitch could repeat: the link came from another site.',
    );
  });

  test('an armed bypass leaves the next download to the browser, once; the one after is taken', async () => {
    const browser = new FakeBrowser();
    const bypass = new Bypass(browser, new SettingsStore(browser));
    await bypass.setNext(true);
    const { deps: d, added, notices } = deps(browser, ok());
    const withBypass = { ...d, leaveNext: (url: string) => bypass.takeNext(url) };
    const first = browser.startBrowserDownload({ url: 'https://example.com/big.iso', totalBytes: 100_000_000 });
    expect(await takeOver(first, withBypass)).toBe('left');
    expect(browser.calls).toEqual([]);
    expect(notices).toEqual(['Left this download to the browser, as you asked.']);
    expect(await bypass.nextArmed()).toBe(false);
    const second = browser.startBrowserDownload({ url: 'https://example.com/other.iso', totalBytes: 100_000_000 });
    expect(await takeOver(second, withBypass)).toBe('taken');
    expect(added).toHaveLength(1);
  });

  test('leaving a site to the browser adds it to the excluded sites once', async () => {
    const browser = new FakeBrowser();
    const store = new SettingsStore(browser);
    const bypass = new Bypass(browser, store);
    expect(await bypass.leaveSite('downloads.example.com')).toEqual(['downloads.example.com']);
    expect(await bypass.leaveSite('downloads.example.com')).toEqual(['downloads.example.com']);
    expect((await store.load()).excludedSites).toEqual(['downloads.example.com']);
  });

  test('a refused re-request leaves the browser download running and records a notice', async () => {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload({
      url: 'https://example.com/signed?sig=1',
      referrer: 'https://example.com/page',
      totalBytes: 100_000_000,
    });
    const { deps: d, added, notices } = deps(browser, { status: 403, statusText: 'Forbidden' });
    expect(await takeOver(item, d)).toBe('left');
    expect(browser.calls).toEqual([]);
    expect(added).toEqual([]);
    expect(notices[0]).toBe('Left to the browser: the server refused to send the file again (error 403); it may be a one-time link.');
  });

  test('a download that came from a form POST is left to the browser', async () => {
    const browser = new FakeBrowser();
    const posts = new PostTracker();
    posts.observe({ url: 'https://example.com/export', method: 'POST', type: 'main_frame' });
    const item = browser.startBrowserDownload({ url: 'https://example.com/export', totalBytes: 0 });
    const { deps: d, notices } = deps(browser, ok(), posts);
    expect(await takeOver(item, d)).toBe('left');
    expect(notices[0]).toMatch(/POST/);
  });

  test('a browser copy that finished before the cancel is kept and no job starts', async () => {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload({ url: 'https://example.com/big.iso', totalBytes: 100_000_000 });
    browser.items.get(item.id)!.state = 'complete';
    const { deps: d, added } = deps(browser, ok());
    expect(await takeOver({ ...item, state: 'in_progress' }, d)).toBe('left');
    expect(added).toEqual([]);
  });

  describe('the Referer of the probe and the job', () => {
    const PAGE = 'https://www.example.com/downloads';
    const SENT = 'https://www.example.com/'; // what browsers send from PAGE to another origin
    /** The probe logs which rules were in place when it ran. */
    function withRules(browser: FakeBrowser, probe: ProbeResult) {
      const referrers = new ReferrerRules(browser);
      const base = deps(browser, probe);
      const seen: unknown[] = [];
      const d = {
        ...base.deps,
        referrers,
        probe: async () => {
          browser.calls.push('probe');
          seen.push(structuredClone(browser.rules));
          return probe;
        },
      };
      return { ...base, d, referrers, seen };
    }

    test('a rule setting the page as Referer on the download URL is in place before the probe; the job takes it over', async () => {
      const browser = new FakeBrowser();
      const item = browser.startBrowserDownload({ url: 'https://dl.example.com/big.iso', referrer: PAGE, totalBytes: 100_000_000 });
      const t = withRules(browser, ok());
      // The job manager holds the rule while the job runs, from inside add().
      t.d.add = async (download: unknown) => {
        t.added.push(download);
        await t.referrers.hold('job-1', 'https://dl.example.com/big.iso', PAGE);
      };
      expect(await takeOver(item, t.d)).toBe('taken');
      expect(t.seen).toEqual([
        [
          expect.objectContaining({
            condition: expect.objectContaining({
              urlFilter: '|https://dl.example.com/big.iso|',
              tabIds: [-1],
              resourceTypes: ['xmlhttprequest'],
            }),
            action: { type: 'modifyHeaders', requestHeaders: [{ header: 'referer', operation: 'set', value: SENT }] },
          }),
        ],
      ]);
      // Added once before the probe, kept for the job: no gap, no second rule.
      expect(browser.calls).toEqual(['rules +1', 'probe', `cancel ${item.id}`, `erase ${item.id}`]);
      expect(browser.rules).toHaveLength(1);
    });

    test('a redirected download gets the rule for its final URL', async () => {
      const browser = new FakeBrowser();
      const item = browser.startBrowserDownload({
        url: 'https://www.example.com/get/1',
        finalUrl: 'https://cdn.example.net/1.iso',
        referrer: PAGE,
        totalBytes: 100_000_000,
      });
      const t = withRules(browser, { status: 403, statusText: 'Forbidden' });
      await takeOver(item, t.d);
      expect((t.seen[0] as { condition: { urlFilter: string } }[])[0]!.condition.urlFilter).toBe('|https://cdn.example.net/1.iso|');
    });

    test('a declined take-over removes the rule', async () => {
      const browser = new FakeBrowser();
      const item = browser.startBrowserDownload({ url: 'https://dl.example.com/big.iso', referrer: PAGE, totalBytes: 100_000_000 });
      const t = withRules(browser, { status: 403, statusText: 'Forbidden' });
      expect(await takeOver(item, t.d)).toBe('left');
      expect(t.seen).toHaveLength(1);
      expect(browser.calls).toEqual(['rules +1', 'probe', 'rules -1']);
      expect(browser.rules).toEqual([]);
      expect(t.notices[0]).toMatch(/403/);
    });

    test('a probe that throws, or a browser copy already complete, removes it too', async () => {
      const browser = new FakeBrowser();
      const item = browser.startBrowserDownload({ url: 'https://dl.example.com/big.iso', referrer: PAGE, totalBytes: 100_000_000 });
      const t = withRules(browser, ok());
      browser.items.get(item.id)!.state = 'complete';
      expect(await takeOver({ ...item, state: 'in_progress' }, t.d)).toBe('left');
      expect(browser.rules).toEqual([]);
      const failing = { ...t.d, probe: async (): Promise<ProbeResult> => Promise.reject(new Error('boom')) };
      await expect(takeOver({ ...item, id: 99, state: 'in_progress' }, failing)).rejects.toThrow('boom');
      expect(browser.rules).toEqual([]);
    });

    test('no rule without a referrer, and none for downloads that are not probed', async () => {
      const browser = new FakeBrowser();
      const t = withRules(browser, ok());
      await takeOver(browser.startBrowserDownload({ url: 'https://dl.example.com/big.iso', totalBytes: 100_000_000 }), t.d);
      await takeOver(browser.startBrowserDownload({ url: 'https://dl.example.com/small', referrer: PAGE, totalBytes: 1000 }), t.d);
      expect(browser.calls.filter((c) => c.startsWith('rules'))).toEqual([]);
    });
  });
});

describe('bypass entries of the context menu', () => {
  test('a link goes to the browser; a page or link leaves its site', () => {
    expect(browserFromClick({ menuItemId: BROWSER_MENU_ID, linkUrl: 'https://example.com/a.iso' })).toEqual({
      url: 'https://example.com/a.iso',
    });
    expect(browserFromClick({ menuItemId: BROWSER_MENU_ID, linkUrl: 'javascript:void(0)' })).toBeUndefined();
    expect(browserFromClick({ menuItemId: LEAVE_SITE_MENU_ID, pageUrl: 'https://dl.example.org/files/' })).toEqual({
      site: 'dl.example.org',
    });
    expect(browserFromClick({ menuItemId: LEAVE_SITE_MENU_ID, pageUrl: 'file:///tmp/x.html' })).toBeUndefined();
    expect(browserFromClick({ menuItemId: 'stitch-download', linkUrl: 'https://example.com/a.iso' })).toBeUndefined();
  });
});
