import { describe, expect, test } from 'vitest';
import type { BrowserDownload } from '../../../src/background/browser-api';
import { PostTracker } from '../../../src/background/post-tracker';
import type { ProbeResult } from '../../../src/background/probe';
import { takeOver } from '../../../src/background/takeover';
import { afterProbe, firstLook } from '../../../src/background/takeover-rules';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../../src/settings/schema';
import { FakeBrowser } from './fake-browser';

const settings = (change: Partial<Settings> = {}) => parseSettings({ ...DEFAULT_SETTINGS, ...change });
const big = (over: Partial<BrowserDownload> = {}): BrowserDownload => ({
  id: 1,
  url: 'https://example.com/big.iso',
  mime: 'application/octet-stream',
  totalBytes: 100_000_000,
  state: 'in_progress',
  ...over,
});
const ok = (size = 100_000_000): ProbeResult => ({ status: 206, statusText: 'Partial Content', size, contentType: 'application/octet-stream' });

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
    expect(firstLook(big({ url: 'https://dl.example.com/x' }), settings({ excludedSites: ['example.com'] }), 'me', false)).toEqual({ take: false });
  });

  test('blob:, data: and POST downloads stay with the browser, with a notice', () => {
    expect(firstLook(big({ url: 'blob:https://a/1' }), settings(), 'me', false)).toMatchObject({ take: false, notice: expect.stringMatching(/blob/) });
    expect(firstLook(big({ url: 'data:application/zip;base64,AA' }), settings(), 'me', false)).toMatchObject({ notice: expect.stringMatching(/data/) });
    expect(firstLook(big(), settings(), 'me', true)).toMatchObject({ take: false, notice: expect.stringMatching(/POST/) });
  });

  test("extensions' own blob: saves (Stitch's included) are left alone silently", () => {
    expect(firstLook(big({ url: 'blob:chrome-extension://abcdef/0f1e' }), settings(), 'me', false)).toEqual({ take: false });
    expect(firstLook(big({ url: 'blob:moz-extension://1234-5678/0f1e' }), settings(), 'me', false)).toEqual({ take: false });
  });

  test.each([401, 403, 410])('a re-request answered %i is left to the browser with a notice', (status) => {
    expect(afterProbe(big(), { status, statusText: 'No' }, settings())).toMatchObject({ take: false, notice: expect.stringContaining(String(status)) });
  });

  test('a re-request that gets another size or a web page is left to the browser', () => {
    expect(afterProbe(big(), ok(5), settings())).toMatchObject({ take: false, notice: expect.stringMatching(/different file/) });
    expect(afterProbe(big(), { ...ok(), contentType: 'text/html' }, settings())).toMatchObject({ take: false, notice: expect.stringMatching(/web page/) });
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

  test('cancels and erases the browser copy, then starts the job with referrer and mirrors', async () => {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload({ url: 'https://example.com/big.iso', referrer: 'https://example.com/page', totalBytes: 100_000_000 });
    const { deps: d, added } = deps(browser, ok());
    expect(await takeOver(item, d)).toBe('taken');
    expect(browser.calls).toEqual([`cancel ${item.id}`, `erase ${item.id}`]);
    expect(added).toEqual([{ url: 'https://example.com/big.iso', referrer: 'https://example.com/page', mirrors: ['https://mirror.example.org/big.iso'] }]);
  });

  test('a refused re-request leaves the browser download running and records a notice', async () => {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload({ url: 'https://example.com/signed?sig=1', totalBytes: 100_000_000 });
    const { deps: d, added, notices } = deps(browser, { status: 403, statusText: 'Forbidden' });
    expect(await takeOver(item, d)).toBe('left');
    expect(browser.calls).toEqual([]);
    expect(added).toEqual([]);
    expect(notices[0]).toMatch(/403 Forbidden/);
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
});
