import { describe, expect, it } from 'vitest';
import { requestContext, sourceForNewLink, type RequestSource } from '../../../src/background/jobs/create-job';
import type { MirrorRule } from '../../../src/settings/schema';

const OLD = 'https://dl.example.com/pub/tool.iso?token=old';
const PAGE = 'https://www.example.com/downloads';
const rules: MirrorRule[] = [
  { pattern: 'dl.example.com/pub/', mirrors: ['https://m1.example.org/pub/'], passQuery: false, sendCookies: true },
  { pattern: 'cdn.example.net/', mirrors: ['https://m2.example.org/'], passQuery: false, sendCookies: true },
];
const chosen: RequestSource = { credentials: 'include', referrer: PAGE, cookieOrigins: ['https://m1.example.org'] };

describe('sourceForNewLink', () => {
  it("keeps the page's Referer on the old address's origin", () => {
    expect(sourceForNewLink(chosen, OLD, 'https://dl.example.com/pub/tool.iso?token=new', rules)).toEqual(chosen);
  });

  it("drops the Referer on another site, whose mirror rule (not the old one's) gives cookies to its mirrors", () => {
    expect(sourceForNewLink(chosen, OLD, 'https://cdn.example.net/tool.iso', rules)).toEqual({
      credentials: 'include',
      referrer: undefined,
      cookieOrigins: ['https://m2.example.org'],
    });
    expect(sourceForNewLink(chosen, OLD, 'https://elsewhere.example/tool.iso', rules)).toEqual({
      credentials: 'include',
      referrer: undefined,
      cookieOrigins: [],
    });
  });

  it('keeps a download taken over without cookies without them, at any address', () => {
    const taken: RequestSource = { credentials: 'omit', referrer: PAGE, cookieOrigins: [] };
    expect(sourceForNewLink(taken, OLD, 'https://cdn.example.net/tool.iso', rules)).toEqual({
      credentials: 'omit',
      referrer: undefined,
      cookieOrigins: [],
    });
  });
});

describe('requestContext', () => {
  it('is what the engine sends per request: the cookie mode, the origins allowed cookies, and an http(s) Referer only', () => {
    expect(requestContext(chosen)).toEqual({ credentials: 'include', credentialOrigins: ['https://m1.example.org'], referrer: PAGE });
    expect(requestContext({ ...chosen, referrer: 'javascript:alert(1)' }).referrer).toBeUndefined();
  });
});
