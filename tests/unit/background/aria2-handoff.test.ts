import { describe, expect, it } from 'vitest';
import { goesToAria2 } from '../../../src/background/aria2/aria2-rule';
import { planHandoff } from '../../../src/background/aria2/handoff';
import { ARIA2_MENU_ID, aria2FromClick } from '../../../src/background/ui/context-menu';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/settings/schema';
import { judgeEndpoint } from '../../../src/settings/aria2-endpoint';

describe('planHandoff', () => {
  it('passes every mirror as another URI of one download, with a split for every connection', () => {
    const plan = planHandoff({ url: 'https://a.example/f.iso', mirrors: ['https://b.example/f.iso', 'https://a.example/f.iso'] }, 4);
    expect(plan.uris).toEqual(['https://a.example/f.iso', 'https://b.example/f.iso']);
    expect(plan.options).toMatchObject({ 'max-connection-per-server': '4', split: '8', 'min-split-size': '1M' });
    expect(plan.leftOut).toEqual([]);
  });

  it('passes the strongest digest known as aria2’s checksum', () => {
    const digests = [
      { algorithm: 'md5', hex: 'aa' },
      { algorithm: 'sha-256', hex: 'bb' },
      { algorithm: 'sha-1', hex: 'cc' },
    ];
    expect(planHandoff({ url: 'https://a.example/f', mirrors: [], digests }, 2).options.checksum).toBe('sha-256=bb');
    expect(planHandoff({ url: 'https://a.example/f', mirrors: [] }, 2).options.checksum).toBeUndefined();
  });

  it('sends the page as Referer only with URIs of the file’s own origin', () => {
    const plan = planHandoff(
      { url: 'https://a.example/f', mirrors: ['https://a.example/g', 'https://b.example/f'], referrer: 'https://a.example/page' },
      4,
    );
    expect(plan.uris).toEqual(['https://a.example/f', 'https://a.example/g']);
    expect(plan.leftOut).toEqual(['https://b.example/f']);
    expect(plan.options.referer).toBe('https://a.example/page');
  });

  it('names the file through the same sanitizer as every other name', () => {
    expect(planHandoff({ url: 'https://a.example/f', mirrors: [], name: '../\u202eexe.jpg' }, 1).options.out).toBe('exe.jpg');
  });
});

describe('judgeEndpoint', () => {
  it('takes http, https, ws and wss, and means /jsonrpc when no path is given', () => {
    expect(judgeEndpoint('http://127.0.0.1:6800', false)).toEqual({ ok: true, url: 'http://127.0.0.1:6800/jsonrpc' });
    expect(judgeEndpoint('wss://nas.example:6800/jsonrpc', false)).toEqual({ ok: true, url: 'wss://nas.example:6800/jsonrpc' });
    expect(judgeEndpoint('ftp://127.0.0.1/', false)).toEqual({ ok: false, problem: 'scheme' });
    expect(judgeEndpoint('not a url', false)).toEqual({ ok: false, problem: 'not-url' });
  });

  it('sends nothing in the clear to an address outside this machine and the local network unless the user confirms it', () => {
    expect(judgeEndpoint('http://192.168.1.20:6800/jsonrpc', false).ok).toBe(true);
    expect(judgeEndpoint('ws://[::1]:6800/jsonrpc', false).ok).toBe(true);
    expect(judgeEndpoint('http://nas.example:6800/jsonrpc', false)).toEqual({ ok: false, problem: 'plain-remote' });
    expect(judgeEndpoint('http://nas.example:6800/jsonrpc', true).ok).toBe(true);
  });
});

describe('goesToAria2', () => {
  const settings = { ...parseSettings(DEFAULT_SETTINGS), aria2Url: 'http://127.0.0.1:6800/jsonrpc' };

  it('sends nothing while no endpoint is set, whatever the rules say', () => {
    expect(goesToAria2({ url: 'https://a.example/f', size: 1e12 }, { ...settings, aria2Url: '', aria2MinBytes: 1 })).toBe(false);
  });

  it('sends a download of at least the size given, not one of unknown size', () => {
    const rule = { ...settings, aria2MinBytes: 1000 };
    expect(goesToAria2({ url: 'https://a.example/f', size: 1000 }, rule)).toBe(true);
    expect(goesToAria2({ url: 'https://a.example/f', size: 999 }, rule)).toBe(false);
    expect(goesToAria2({ url: 'https://a.example/f' }, rule)).toBe(false);
  });

  it('sends a download from a site given, or linked from one of its pages, subdomains included', () => {
    const rule = { ...settings, aria2Sites: ['example.org'] };
    expect(goesToAria2({ url: 'https://dl.example.org/f' }, rule)).toBe(true);
    expect(goesToAria2({ url: 'https://cdn.example/f', referrer: 'https://example.org/page' }, rule)).toBe(true);
    expect(goesToAria2({ url: 'https://example.com/f' }, rule)).toBe(false);
  });
});

describe('aria2FromClick', () => {
  const click = (linkUrl: string, menuItemId = ARIA2_MENU_ID) => ({ menuItemId, linkUrl, pageUrl: 'https://site.example/page' });
  const mirrorsFor = (url: string) => (url.startsWith('https://a.example/') ? ['https://b.example/f.iso'] : []);

  it('hands an http(s) link over with its mirrors and the page as Referer', () => {
    expect(aria2FromClick(click('https://a.example/f.iso'), mirrorsFor)).toEqual({
      url: 'https://a.example/f.iso',
      mirrors: ['https://b.example/f.iso'],
      referrer: 'https://site.example/page',
    });
  });

  it('offers what only aria2 runs (magnet, ftp), without the page, and nothing else', () => {
    expect(aria2FromClick(click('magnet:?xt=urn:btih:abc'), mirrorsFor)).toEqual({ url: 'magnet:?xt=urn:btih:abc', mirrors: [] });
    expect(aria2FromClick(click('ftp://ftp.example/pub/f.iso'), mirrorsFor)).toEqual({ url: 'ftp://ftp.example/pub/f.iso', mirrors: [] });
    expect(aria2FromClick(click('javascript:alert(1)'), mirrorsFor)).toBeUndefined();
    expect(aria2FromClick(click('https://a.example/f.iso', 'stitch-download'), mirrorsFor)).toBeUndefined();
  });
});
