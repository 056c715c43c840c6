import { describe, expect, it } from 'vitest';
import { nodeFetch } from '../../src/cli/node-fetch';
import type { HttpFetch } from '../../src/engine';
import { contentSha256 } from '../support/content';
import type { Mirror } from '../support/mirror-server';
import { MiB, useTestBed } from '../support/test-bed';

const { mirror, download } = useTestBed();

const PUBLIC_NAME = 'files.example';
const base64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

/** The mirror's URL under a public host name (the engine judges hosts by name). */
const publicUrl = (m: Mirror) => m.url.replace('127.0.0.1', PUBLIC_NAME);

/**
 * Real fetch that records what each request was sent with. It stands in for DNS, too: the public
 * name is the mirror's loopback address (no test may leave the machine).
 */
function recordingFetch(base: HttpFetch = fetch) {
  const sent: { url: string; credentials?: RequestCredentials; referrer?: string; redirect?: RequestRedirect }[] = [];
  const fetcher: HttpFetch = (url, init) => {
    sent.push({ url, credentials: init?.credentials, referrer: init?.referrer, redirect: init?.redirect });
    return base(url.replace(`//${PUBLIC_NAME}:`, '//127.0.0.1:'), init);
  };
  return { sent, fetcher };
}

describe('who gets credentials and referrer', () => {
  it('a redirect to another origin is followed hop by hop, without cookies or referrer after the hop', async () => {
    const size = 2 * MiB;
    const target = await mirror({ size, seed: 81 });
    const primary = await mirror({ size, seed: 81, redirect: { location: target.url } });
    const { sent, fetcher } = recordingFetch();
    const run = await download(primary.url, { credentials: 'include', referrer: 'http://127.0.0.1/page', fetch: fetcher });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(await contentSha256(81, size));
    const toPrimary = sent.filter((s) => s.url === primary.url);
    const toTarget = sent.filter((s) => s.url === target.url);
    expect(toPrimary.length).toBeGreaterThan(0);
    expect(toTarget.length).toBe(toPrimary.length);
    for (const s of toPrimary) expect(s).toMatchObject({ credentials: 'include', referrer: 'http://127.0.0.1/page', redirect: 'manual' });
    for (const s of toTarget) expect(s).toMatchObject({ credentials: 'omit', referrer: '', redirect: 'manual' });
    expect(target.stats.requests.every((r) => r.referer === undefined)).toBe(true);
  });
});

describe('where servers may send Stitch', () => {
  // The CLI's fetch must show each hop too (redirect: 'manual'), or it would follow them unchecked.
  it.each([
    ['fetch', fetch],
    ['the CLI (nodeFetch)', nodeFetch],
  ])('a public server cannot redirect into the local network: the target is never asked (%s)', async (_, base) => {
    const inside = await mirror({ size: MiB, seed: 82 });
    const primary = await mirror({ size: MiB, seed: 82, redirect: { location: inside.url } });
    const { fetcher } = recordingFetch(base);
    const run = await download(publicUrl(primary), { fetch: fetcher, maxAttemptsWithoutProgress: 2 });
    expect(run.result.status).toBe('failed');
    expect(run.result.error?.message).toContain(
      `redirected to ${inside.url} is on a local or private network address, and the download is not`,
    );
    expect(primary.stats.requests.length).toBeGreaterThan(0);
    expect(inside.stats.requests).toEqual([]);
  });

  it.each([
    ['file:///etc/passwd', 'redirected to file:///etc/passwd is not an http:// or https:// address'],
    ['http://[', 'redirected to "http://[", which is not a URL'],
  ])('a redirect to %s is refused, saying where it led', async (location, reason) => {
    const primary = await mirror({ size: MiB, seed: 85, redirect: { location } });
    const run = await download(primary.url);
    expect(run.result.status).toBe('failed');
    expect(run.result.error?.message).toContain(`${primary.url} ${reason}`);
  });

  it('a mirror in the local network advertised for a public file is ignored, with a notice', async () => {
    const size = 2 * MiB;
    const sha = await contentSha256(83, size);
    const inside = await mirror({ size, seed: 83 });
    const primary = await mirror({
      size,
      seed: 83,
      extraHeaders: { 'Repr-Digest': `sha-256=:${base64(sha)}:`, Link: `<${inside.url}>; rel=duplicate` },
    });
    const { fetcher } = recordingFetch();
    const run = await download(publicUrl(primary), { fetch: fetcher });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(sha);
    expect(inside.stats.requests).toEqual([]);
    expect(run.notices).toContain(
      `ignored 1 advertised source(s): ${inside.url} is on a local or private network address, and the download is not`,
    );
  });

  it('the same mirror is used when the file itself is local', async () => {
    const size = 8 * MiB;
    const sha = await contentSha256(84, size);
    const inside = await mirror({ size, seed: 84 });
    const primary = await mirror({
      size,
      seed: 84,
      rate: 8 * MiB,
      extraHeaders: { 'Repr-Digest': `sha-256=:${base64(sha)}:`, Link: `<${inside.url}>; rel=duplicate` },
    });
    const run = await download(primary.url);
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(sha);
    expect(inside.stats.requests.length).toBeGreaterThan(0);
  });
});
