import { describe, expect, it } from 'vitest';
import { goesToAria2 } from '../../../src/background/aria2/aria2-rule';
import { planHandoff } from '../../../src/background/aria2/handoff';
import { ARIA2_MENU_ID, aria2FromClick } from '../../../src/background/ui/context-menu';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/settings/schema';
import { judgeEndpoint } from '../../../src/settings/aria2-endpoint';

describe('planHandoff', () => {
  it('passes every mirror as another URI of one download, with a split for every connection', () => {
    const plan = planHandoff(
      { url: 'https://a.example/f.iso', mirrors: ['https://b.example/f.iso', 'https://a.example/f.iso'] },
      4,
      'user',
    );
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
    expect(planHandoff({ url: 'https://a.example/f', mirrors: [], digests }, 2, 'user').options.checksum).toBe('sha-256=bb');
    expect(planHandoff({ url: 'https://a.example/f', mirrors: [] }, 2, 'user').options.checksum).toBeUndefined();
  });

  it('sends the page as Referer only with URIs of the file’s own origin', () => {
    const plan = planHandoff(
      { url: 'https://a.example/f', mirrors: ['https://a.example/g', 'https://b.example/f'], referrer: 'https://a.example/page' },
      4,
      'rule',
    );
    expect(plan.uris).toEqual(['https://a.example/f', 'https://a.example/g']);
    expect(plan.leftOut).toEqual(['https://b.example/f']);
    expect(plan.options.referer).toBe('https://a.example/page');
  });

  it('names the file through the same sanitizer as every other name', () => {
    expect(planHandoff({ url: 'https://a.example/f', mirrors: [], name: '../\u202eexe.jpg' }, 1, 'user').options.out).toBe('exe.jpg');
  });

  it('names the file after its URL when no name is known, so the server’s Content-Disposition does not', () => {
    expect(planHandoff({ url: 'https://a.example/dl/%E2%80%AEgpj.exe?x=1', mirrors: [] }, 1, 'rule').options.out).toBe('gpj.exe');
    expect(planHandoff({ url: 'https://a.example/', mirrors: [] }, 1, 'rule').options.out).toBeUndefined();
  });

  it('hands over only mirrors that pass the checks of any source', () => {
    const mirrors = [
      'http://127.0.0.1/f.iso',
      'http://192.168.1.1/f.iso',
      'ftp://b.example/f.iso',
      'http://plain.example/f.iso',
      'https://good.example/f.iso',
    ];
    const plan = planHandoff({ url: 'https://a.example/f.iso', mirrors }, 4, 'user');
    expect(plan.uris).toEqual(['https://a.example/f.iso', 'https://good.example/f.iso']);
    expect(plan.leftOut).toEqual(mirrors.slice(0, 4));
    // A digest aria2 checks covers a plain-http mirror's bytes; a local one stays out all the same.
    const covered = planHandoff({ url: 'https://a.example/f.iso', mirrors, digests: [{ algorithm: 'sha-256', hex: 'bb' }] }, 4, 'user');
    expect(covered.uris).toEqual(['https://a.example/f.iso', 'http://plain.example/f.iso', 'https://good.example/f.iso']);
    // A download on the user's own network may use mirrors there.
    expect(planHandoff({ url: 'http://192.168.1.2/f', mirrors: ['http://192.168.1.3/f'] }, 4, 'rule').uris).toHaveLength(2);
  });

  it('lets aria2 follow no Metalink or torrent found in a body unless the user sent one on purpose', () => {
    const follows = (url: string, purpose: 'user' | 'rule') => {
      const { options } = planHandoff({ url, mirrors: [] }, 1, purpose);
      return [options['follow-torrent'], options['follow-metalink']];
    };
    expect(follows('https://a.example/file.iso', 'user')).toEqual(['false', 'false']);
    expect(follows('https://a.example/file.torrent', 'rule')).toEqual(['false', 'false']);
    expect(follows('https://a.example/file.meta4', 'rule')).toEqual(['false', 'false']);
    expect(follows('https://a.example/dl/File.Torrent?x=1', 'user')).toEqual(['true', 'false']);
    expect(follows('magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567', 'user')).toEqual(['true', 'false']);
    expect(follows('https://a.example/file.meta4', 'user')).toEqual(['false', 'true']);
    expect(follows('ftp://a.example/file.metalink', 'user')).toEqual(['false', 'true']);
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
