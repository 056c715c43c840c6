import { describe, expect, it } from 'vitest';
import { trustedFetch, type TrustScope } from '../../src/engine/http/request-trust';
import type { HttpFetch, HttpRequest, HttpResponse } from '../../src/engine/http/fetch-port';

/** A port that records what it was asked and answers 200, or a redirect where `redirects` says. */
function port(redirects: Record<string, string> = {}) {
  const asked: { url: string; init: HttpRequest | undefined }[] = [];
  const fetcher: HttpFetch = async (url, init) => {
    asked.push({ url, init });
    const location = redirects[url];
    const headers = { get: (name: string) => (name.toLowerCase() === 'location' ? (location ?? null) : null) };
    const response: HttpResponse = { status: location ? 302 : 200, statusText: '', ok: !location, url, headers, body: null };
    return response;
  };
  return { fetcher, asked };
}

const publicScope: TrustScope = { primaryUrl: 'https://video.example/show/master.m3u8', credentials: 'include', credentialOrigins: [] };

describe('the one door (trustedFetch)', () => {
  it.each([
    'http://127.0.0.1/cgi-bin/reboot.cgi',
    'https://10.0.0.7/key.bin',
    'http://169.254.169.254/latest/meta-data/',
    'https://192.168.1.1/v/index.m3u8',
    'https://[::1]/x',
    'file:///etc/passwd',
    'ftp://video.example/x',
  ])('refuses to request %s for a public download, and asks the port nothing', async (url) => {
    const { fetcher, asked } = port();
    await expect(trustedFetch(fetcher, publicScope)(url)).rejects.toThrow(/local or private network|not an http/);
    expect(asked).toEqual([]);
  });

  it('refuses plain http for an https download unless the scope allows it (a job whose mirror set checks digests)', async () => {
    const { fetcher, asked } = port();
    await expect(trustedFetch(fetcher, publicScope)('http://cdn.example/seg1.ts')).rejects.toThrow(/plain http and the download is https/);
    expect(asked).toEqual([]);
    await trustedFetch(fetcher, { ...publicScope, allowPlainHttp: true })('http://cdn.example/seg1.ts');
    expect(asked.map((a) => a.url)).toEqual(['http://cdn.example/seg1.ts']);
  });

  it('lets a local download reach its network, and tells the port which connections must be public', async () => {
    const { fetcher, asked } = port();
    await trustedFetch(fetcher, { ...publicScope, primaryUrl: 'http://192.168.1.20/cam.m3u8' })('http://192.168.1.20/seg.ts');
    const door = trustedFetch(fetcher, publicScope);
    await door('https://video.example/show/v1.m3u8');
    await door('https://cdn.example/seg.ts');
    expect(asked.map((a) => a.init?.localNetwork)).toEqual(['allow', 'allow', 'refuse']);
  });

  it('checks every redirect hop before it is requested', async () => {
    const { fetcher, asked } = port({ 'https://cdn.example/seg.ts': 'http://10.1.1.1/seg.ts' });
    await expect(trustedFetch(fetcher, publicScope)('https://cdn.example/seg.ts')).rejects.toThrow(/redirected to .*local or private/);
    expect(asked.map((a) => a.url)).toEqual(['https://cdn.example/seg.ts']);
  });

  it('follows no redirect where the scope refuses them (aria2 RPC: the token must not go elsewhere)', async () => {
    const { fetcher, asked } = port({ 'http://127.0.0.1:6800/jsonrpc': 'http://127.0.0.1:9999/steal' });
    const rpc = trustedFetch(fetcher, {
      primaryUrl: 'http://127.0.0.1:6800/jsonrpc',
      credentials: 'omit',
      credentialOrigins: [],
      redirects: 'refuse',
    });
    await expect(rpc('http://127.0.0.1:6800/jsonrpc', { method: 'POST', body: '{}' })).rejects.toThrow(/not followed/);
    expect(asked.map((a) => a.url)).toEqual(['http://127.0.0.1:6800/jsonrpc']);
  });
});
