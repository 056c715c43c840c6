import { describe, expect, test } from 'vitest';
import type { SeenRedirect } from '../../../src/background/browser-api';
import { LocalNetworkRules } from '../../../src/background/network/local-network-rules';
import { MAX_HOP_AGE_MS, MAX_HOPS, RedirectLog, withRedirectLog } from '../../../src/background/network/redirect-log';
import { DownloadError, RefusedResponse, trustedFetch, type HttpFetch, type HttpRequest, type HttpResponse } from '../../../src/engine';
import { judgeFailure } from '../../../src/engine/scheduler/policies/failure-policy';
import { FakeBrowser, FakeEvent } from '../../support/fake-browser';

const PUBLIC = 'https://files.example.com/file.iso';
const ROUTER = 'http://192.168.1.1/admin';
/** How long the wrapper waits for a hop in these tests. */
const WAIT_MS = 40;

/** A clock the test moves by hand. */
function clock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/**
 * A log that listens to a fake event, and that event. `mayReach` stands for the browser's rules;
 * `letThrough` records the URLs the log had them let through (the task runs while they are).
 */
function watched(mayReach?: (url: string) => boolean, now?: () => number) {
  const log = new RedirectLog(now);
  const event = new FakeEvent<(hop: SeenRedirect) => void>();
  const letThrough: string[] = [];
  const rules = mayReach && {
    mayReach,
    letThrough: async <T>(url: string, task: () => Promise<T>) => {
      letThrough.push(url);
      return task();
    },
  };
  log.watch(event, rules);
  const hop = (url: string, redirectUrl: string, requestId = String(Math.random())) =>
    event.fire({ requestId, url, statusCode: 302, redirectUrl });
  return { log, event, hop, letThrough };
}

function response(url: string, init: Partial<HttpResponse> = {}): HttpResponse {
  const status = init.status ?? 200;
  return {
    status,
    statusText: '',
    ok: status >= 200 && status < 300,
    url,
    headers: { get: () => null },
    body: null,
    ...init,
  };
}

const opaque = (url: string) => response(url, { status: 0, type: 'opaqueredirect' });

/**
 * A browser's fetch, faked: `redirects` maps a URL to where its server redirects. With
 * `redirect: 'manual'` a redirect is opaque; following it, each hop is reported to `seen` (as
 * webRequest's onBeforeRedirect does, before fetch settles) and a hop into `blocked` fails as a
 * blocked request does (TypeError). `seenAfterMs`: the hops of a manual request are reported that
 * long after it resolved (undefined: never).
 */
function fakeBrowserFetch(options: {
  redirects: Record<string, string>;
  seen: (url: string, to: string) => void;
  blocked?: (url: string) => boolean;
  seenAfterMs?: number;
}) {
  const calls: { url: string; init?: HttpRequest }[] = [];
  const fetcher: HttpFetch = async (url, init) => {
    calls.push({ url, init });
    if (options.blocked?.(url)) throw new TypeError('Failed to fetch');
    let at = url;
    for (let hop = 0; hop < 10; hop++) {
      const to = options.redirects[at];
      if (to === undefined) return response(at);
      if (init?.redirect === 'manual') {
        const { seenAfterMs } = options;
        if (seenAfterMs !== undefined) setTimeout(() => options.seen(at, to), seenAfterMs);
        return opaque(url);
      }
      options.seen(at, to);
      if (options.blocked?.(to)) throw new TypeError('Failed to fetch');
      at = to;
    }
    throw new TypeError('Failed to fetch');
  };
  return { fetcher, calls };
}

const scope = { primaryUrl: PUBLIC, credentials: 'include' as const, credentialOrigins: [] };

describe('RedirectLog', () => {
  test('remembers hops from onBeforeRedirect and from a 3xx’s Location, one per request and URL', () => {
    const { log, event } = watched();
    event.fire({ requestId: '1', url: PUBLIC, statusCode: 302, location: '/mirror/file.iso' });
    expect(log.hopFrom(PUBLIC, 0)).toEqual({ to: 'https://files.example.com/mirror/file.iso', status: 302 });
    // onBeforeRedirect of the same request: where the browser went wins, no second hop.
    event.fire({ requestId: '1', url: PUBLIC, statusCode: 302, redirectUrl: 'https://cdn.example.net/file.iso' });
    expect(log.chainFrom(PUBLIC, 0)).toEqual([{ from: PUBLIC, to: 'https://cdn.example.net/file.iso' }]);
  });

  test('ignores answers that are no redirect, and a Location that is not a URL', () => {
    const { log, event } = watched();
    event.fire({ requestId: '1', url: PUBLIC, statusCode: 304, location: '/elsewhere' });
    event.fire({ requestId: '2', url: PUBLIC, statusCode: 302 });
    event.fire({ requestId: '3', url: PUBLIC, statusCode: 302, location: 'http://[' });
    expect(log.hopFrom(PUBLIC, 0)).toBeUndefined();
  });

  test('matches URLs as the browser writes them (no fragment, normalized)', () => {
    const { log, hop } = watched();
    hop('https://FILES.example.com/file.iso', ROUTER);
    expect(log.hopFrom(`${PUBLIC}#part`, 0)?.to).toBe(ROUTER);
  });

  test('tells only hops heard of since a time, the newest first', () => {
    const time = clock();
    const { log, hop } = watched(undefined, time.now);
    hop(PUBLIC, 'https://a.example.net/file.iso');
    time.advance(10);
    const since = time.now();
    expect(log.hopFrom(PUBLIC, since)).toBeUndefined();
    hop(PUBLIC, 'https://b.example.net/file.iso');
    hop(PUBLIC, 'https://c.example.net/file.iso');
    expect(log.hopFrom(PUBLIC, since)?.to).toBe('https://c.example.net/file.iso');
  });

  test(`keeps the last ${MAX_HOPS} hops of the last ${MAX_HOP_AGE_MS / 1000} s`, () => {
    const time = clock();
    const { log, hop } = watched(undefined, time.now);
    for (let i = 0; i <= MAX_HOPS; i++) hop(`https://example.com/${i}`, ROUTER);
    expect(log.hopFrom('https://example.com/0', 0)).toBeUndefined();
    expect(log.hopFrom('https://example.com/1', 0)).toBeDefined();
    time.advance(MAX_HOP_AGE_MS + 1);
    expect(log.hopFrom(`https://example.com/${MAX_HOPS}`, 0)).toBeUndefined();
  });

  test('follows a chain of hops, however they loop', () => {
    const { log, hop } = watched();
    hop(PUBLIC, 'https://a.example.net/f');
    hop('https://a.example.net/f', 'https://b.example.net/f');
    hop('https://b.example.net/f', PUBLIC);
    hop('https://unrelated.example.org/', ROUTER);
    expect(log.chainFrom(PUBLIC, 0).map((h) => h.to)).toEqual(['https://a.example.net/f', 'https://b.example.net/f', PUBLIC]);
  });

  test('waits for a hop until it is heard of, or for a bounded time', async () => {
    const { log, hop } = watched();
    setTimeout(() => hop(PUBLIC, ROUTER), 5);
    expect(await log.waitFor(() => log.hopFrom(PUBLIC, 0), 1000)).toMatchObject({ to: ROUTER });
    const started = Date.now();
    expect(await log.waitFor(() => log.hopFrom('https://example.org/', 0), 30)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(500);
  });

  test('listens only when the browser gives the event', () => {
    const log = new RedirectLog();
    log.watch(undefined);
    expect(log.listening).toBe(false);
    const event = new FakeEvent<(hop: SeenRedirect) => void>();
    log.watch(event);
    expect(log.listening).toBe(true);
    expect(event.listeners.size).toBe(1);
  });
});

describe('withRedirectLog under trustedFetch, as in the browser', () => {
  test('a hidden hop into a local address is refused with the engine’s words before it is sent', async () => {
    const { log, hop } = watched();
    const browser = fakeBrowserFetch({ redirects: { [PUBLIC]: ROUTER }, seen: hop, seenAfterMs: 2 });
    const fetcher = trustedFetch(withRedirectLog(browser.fetcher, log, WAIT_MS), scope);
    await expect(fetcher(PUBLIC)).rejects.toThrow(
      `${PUBLIC} redirected to ${ROUTER} is on a local or private network address, and the download is not`,
    );
    expect(browser.calls.map((c) => [c.url, c.init?.redirect])).toEqual([[PUBLIC, 'manual']]);
  });

  test('a hop heard of before fetch resolves is used at once', async () => {
    const { log, hop } = watched();
    const browser = fakeBrowserFetch({ redirects: { [PUBLIC]: ROUTER }, seen: hop, seenAfterMs: 0 });
    const fetcher = withRedirectLog(
      async (url, init) => {
        const answer = await browser.fetcher(url, init);
        await new Promise((r) => setTimeout(r, 5)); // the event first
        return answer;
      },
      log,
      10_000,
    );
    const started = Date.now();
    const answer = await fetcher(PUBLIC, { redirect: 'manual' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect([answer.status, answer.headers.get('Location'), answer.url, answer.body]).toEqual([302, ROUTER, PUBLIC, null]);
  });

  test('a hidden public hop is followed by hand, each hop with the rules of its own URL', async () => {
    const { log, hop } = watched();
    const cdn = 'https://cdn.example.net/file.iso';
    const back = 'https://files.example.com/signed/file.iso';
    const browser = fakeBrowserFetch({ redirects: { [PUBLIC]: cdn, [cdn]: back }, seen: hop, seenAfterMs: 1 });
    const fetcher = trustedFetch(withRedirectLog(browser.fetcher, log, WAIT_MS), { ...scope, referrer: 'https://files.example.com/' });
    const answer = await fetcher(PUBLIC);
    expect([answer.status, answer.url]).toEqual([200, back]);
    expect(browser.calls.map((c) => [c.url, c.init?.redirect, c.init?.credentials, c.init?.referrer])).toEqual([
      [PUBLIC, 'manual', 'include', 'https://files.example.com/'],
      [cdn, 'manual', 'omit', ''],
      [back, 'manual', 'include', 'https://files.example.com/'],
    ]);
  });

  test('a hop not heard of in time: the blind follow the browser stops fails at once, naming the hop', async () => {
    const { log, hop } = watched();
    const cdn = 'https://cdn.example.net/file.iso';
    const browser = fakeBrowserFetch({ redirects: { [PUBLIC]: cdn, [cdn]: ROUTER }, seen: hop, blocked: (url) => url === ROUTER });
    const fetcher = trustedFetch(withRedirectLog(browser.fetcher, log, WAIT_MS), scope);
    const failure = await fetcher(PUBLIC).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RefusedResponse);
    expect((failure as Error).message).toBe(
      `${cdn} redirected to ${ROUTER} is on a local or private network address, and the download is not`,
    );
    expect(browser.calls.map((c) => [c.url, c.init?.redirect, c.init?.credentials])).toEqual([
      [PUBLIC, 'manual', 'include'],
      [PUBLIC, 'follow', 'omit'],
    ]);
    // The engine gives that source up at once instead of retrying it.
    expect(judgeFailure(failure, false, 60_000, () => new DownloadError('storage', 'full'))).toMatchObject({
      kind: 'drop',
      why: {
        kind: 'failed',
        message: `${cdn} redirected to ${ROUTER} is on a local or private network address, and the download is not`,
      },
    });
  });

  test('a hop of a blind follow heard of just after it failed still counts', async () => {
    const { log, hop } = watched();
    const fetcher = withRedirectLog(
      async () => {
        setTimeout(() => hop(PUBLIC, ROUTER), 5);
        throw new TypeError('Failed to fetch');
      },
      log,
      1000,
    );
    await expect(fetcher(PUBLIC, { redirect: 'follow' })).rejects.toBeInstanceOf(RefusedResponse);
  });

  test('a failed blind follow is left as it failed when the browser lets Stitch reach the hop, or no hop is local', async () => {
    const reachable = watched(() => true);
    const failing = (log: RedirectLog, hop: (url: string, to: string) => void, to: string) =>
      withRedirectLog(
        async () => {
          hop(PUBLIC, to);
          throw new TypeError('Failed to fetch');
        },
        log,
        WAIT_MS,
      );
    await expect(failing(reachable.log, reachable.hop, ROUTER)(PUBLIC)).rejects.toThrow(TypeError);
    const plain = watched();
    await expect(failing(plain.log, plain.hop, 'https://cdn.example.net/f')(PUBLIC)).rejects.toThrow(TypeError);
  });

  test('a blind follow from a local address into another the browser stops is named too', async () => {
    const primary = 'http://192.168.1.10/f';
    const { log, hop } = watched((url) => url.startsWith('http://192.168.1.10/'));
    const fetcher = withRedirectLog(
      async () => {
        hop(primary, ROUTER);
        throw new TypeError('Failed to fetch');
      },
      log,
      WAIT_MS,
    );
    await expect(fetcher(primary)).rejects.toThrow(
      new RefusedResponse(
        `${primary} redirected to ${ROUTER} is on a local or private network address other than the download's own, where Stitch's requests are stopped`,
      ),
    );
  });

  test('a local download’s redirect to another local origin is followed by hand, that origin let through for the hop', async () => {
    const primary = 'http://192.168.1.10/file.iso';
    const other = 'http://192.168.1.11/file.iso';
    const { log, hop, letThrough } = watched((url) => !url.startsWith(other));
    // The browser stops `other` unless the log has it let through (the hop the engine checked).
    const browser = fakeBrowserFetch({ redirects: { [primary]: other }, seen: hop, seenAfterMs: 1, blocked: () => false });
    const fetcher = trustedFetch(withRedirectLog(browser.fetcher, log, WAIT_MS), { ...scope, primaryUrl: primary });
    const answer = await fetcher(primary);
    expect(answer.status).toBe(200);
    expect(browser.calls.map((c) => [c.url, c.init?.redirect])).toEqual([
      [primary, 'manual'],
      [other, 'manual'],
    ]);
    expect(letThrough).toEqual([other]);
  });

  test('a public download’s hidden hop into a local address is never let through', async () => {
    const { log, hop, letThrough } = watched((url) => url !== ROUTER);
    const browser = fakeBrowserFetch({ redirects: { [PUBLIC]: ROUTER }, seen: hop, seenAfterMs: 1, blocked: (url) => url === ROUTER });
    const fetcher = trustedFetch(withRedirectLog(browser.fetcher, log, WAIT_MS), { ...scope, primaryUrl: PUBLIC });
    await expect(fetcher(PUBLIC)).rejects.toThrow(/redirected to http:\/\/192\.168\.1\.1\/admin is on a local or private network address/);
    expect(browser.calls.map((c) => c.url)).toEqual([PUBLIC]);
    expect(letThrough).toEqual([]);
  });

  test('an abort or a hop heard of before the request are not taken for a refusal', async () => {
    const { log, hop } = watched();
    hop(PUBLIC, ROUTER); // an earlier request's
    const aborting = withRedirectLog(
      async () => {
        throw new DOMException('aborted', 'AbortError');
      },
      log,
      WAIT_MS,
    );
    await expect(aborting(PUBLIC)).rejects.toMatchObject({ name: 'AbortError' });
    const failing = withRedirectLog(
      async () => {
        throw new TypeError('Failed to fetch');
      },
      log,
      WAIT_MS,
    );
    await expect(failing(PUBLIC)).rejects.toThrow(TypeError);
    const browser = fakeBrowserFetch({ redirects: { [PUBLIC]: ROUTER }, seen: hop });
    const answer = await withRedirectLog(browser.fetcher, log, WAIT_MS)(PUBLIC, { redirect: 'manual' });
    expect(answer.type).toBe('opaqueredirect');
  });

  test('without a log that listens, fetch is left as it is', async () => {
    const log = new RedirectLog();
    log.record({ requestId: '1', url: PUBLIC, statusCode: 302, redirectUrl: ROUTER });
    const browser = fakeBrowserFetch({ redirects: { [PUBLIC]: ROUTER }, seen: () => {} });
    const started = Date.now();
    const answer = await withRedirectLog(browser.fetcher, log, 10_000)(PUBLIC, { redirect: 'manual' });
    expect(answer.type).toBe('opaqueredirect');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('LocalNetworkRules.allows: what the browser lets Stitch reach', () => {
  test('any public URL; a local one only while a download holds its origin', async () => {
    const rules = new LocalNetworkRules(new FakeBrowser());
    expect(rules.allows(PUBLIC)).toBe(true);
    expect(rules.allows(ROUTER)).toBe(false);
    await rules.allow('job-1', 'http://192.168.1.1/file.iso');
    expect(rules.allows(ROUTER)).toBe(true);
    expect(rules.allows('http://192.168.1.1:8080/')).toBe(false);
    await rules.release('job-1');
    expect(rules.allows(ROUTER)).toBe(false);
  });
});
