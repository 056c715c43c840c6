import { describe, expect, test } from 'vitest';
import type { BrowserDownload } from '../../../src/background/browser-api';
import { PostTracker } from '../../../src/background/network/post-tracker';
import { probeUrl, type ProbeResult } from '../../../src/background/takeover/probe';
import { decideAtStart, type StartFacts } from '../../../src/background/takeover/take-or-watch';
import { CappedHosts } from '../../../src/background/takeover/capped-hosts';
import { takeOver, type TakeoverDeps } from '../../../src/background/takeover/takeover';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../../src/settings/schema';
import { FakeBrowser } from '../../support/fake-browser';

const nothingKnown: StartFacts = {
  mirrorsKnown: false,
  digestAnnounced: false,
  alwaysTakeOver: false,
  hostCapsConnections: false,
  aria2RuleMatches: false,
};

describe('decide at the start', () => {
  test('a download Stitch cannot surely make faster or safer is watched', () => {
    expect(decideAtStart(nothingKnown)).toBe('watch');
  });

  test.each<keyof StartFacts>(['mirrorsKnown', 'digestAnnounced', 'alwaysTakeOver', 'hostCapsConnections', 'aria2RuleMatches'])(
    'one reason is enough to take it at once: %s',
    (reason) => {
      expect(decideAtStart({ ...nothingKnown, [reason]: true })).toBe('take');
    },
  );
});

describe('the probe tells what the server announces', () => {
  const answer = (headers: Record<string, string>) => async () =>
    new Response(null, { status: 206, headers: { 'content-range': 'bytes 0-0/1000', ...headers } });
  const probe = (headers: Record<string, string>) =>
    probeUrl('https://example.com/big.iso', { credentials: 'omit', fetch: answer(headers) });
  const sha256 = 'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:';

  test('mirrors with a digest, a Metalink, or a digest alone; mirrors without a digest count for nothing', async () => {
    const mirror = '<https://mirror.example.org/big.iso>; rel=duplicate';
    expect(await probe({ link: mirror, 'repr-digest': sha256 })).toMatchObject({ mirrorsAdvertised: true, digestAnnounced: true });
    expect(await probe({ link: '<https://example.com/big.iso.meta4>; rel=describedby; type="application/metalink4+xml"' })).toMatchObject({
      mirrorsAdvertised: true,
      digestAnnounced: false,
    });
    expect(await probe({ 'repr-digest': sha256 })).toMatchObject({ mirrorsAdvertised: false, digestAnnounced: true });
    expect(await probe({ link: mirror })).toMatchObject({ mirrorsAdvertised: false, digestAnnounced: false });
  });
});

describe('takeOver decides at the start', () => {
  const big: Omit<BrowserDownload, 'id'> = {
    url: 'https://example.com/big.iso',
    totalBytes: 100_000_000,
    mime: 'application/octet-stream',
  };
  const probed: ProbeResult = { status: 206, statusText: 'Partial Content', size: 100_000_000 };

  function run(settings: Partial<Settings>, probe: ProbeResult, mirrors: string[] = [], more: Partial<TakeoverDeps> = {}) {
    const browser = new FakeBrowser();
    const item = browser.startBrowserDownload(big);
    const added: unknown[] = [];
    const watched: number[] = [];
    const notices: string[] = [];
    const outcome = takeOver(item, {
      ...more,
      api: browser,
      settings: async () => parseSettings({ ...DEFAULT_SETTINGS, ...settings }),
      posts: new PostTracker(),
      add: async (download) => void added.push(download),
      notice: async (message) => void notices.push(message),
      mirrorsFor: () => mirrors,
      probe: async () => probe,
      watch: (download) => void watched.push(download.id),
    });
    return { browser, item, added, watched, notices, outcome };
  }

  test('a download the disk holds once but not twice stays with the browser, watched, saying why; with room for both it is taken', async () => {
    const short = run({ alwaysTakeOver: true }, probed, [], { freeBytes: async () => 150_000_000 });
    expect(await short.outcome).toBe('watched');
    expect(short.watched).toEqual([short.item.id]);
    expect(short.added).toEqual([]);
    expect(short.browser.calls).toEqual([]);
    expect(short.notices).toEqual([
      'Left to the browser, which writes the file once: Stitch can use 143 MB of the disk now, and would need 223 MB to download and then save it.',
    ]);
    const roomy = run({ alwaysTakeOver: true }, probed, [], { freeBytes: async () => 400_000_000 });
    expect(await roomy.outcome).toBe('taken');
    // Nobody can tell the free space: as before, taken.
    expect(await run({ alwaysTakeOver: true }, probed, [], { freeBytes: async () => undefined }).outcome).toBe('taken');
  });

  test('by default (Always take over off), a plain download stays with the browser, watched and untouched', async () => {
    expect(parseSettings(DEFAULT_SETTINGS).alwaysTakeOver).toBe(false);
    const { browser, item, added, watched, outcome } = run({}, probed);
    expect(await outcome).toBe('watched');
    expect(watched).toEqual([item.id]);
    expect(added).toEqual([]);
    expect(browser.calls).toEqual([]);
  });

  test('without Always take over, a download with mirrors (a rule, or announced) or a digest is taken at once', async () => {
    for (const [probe, mirrors] of [
      [probed, ['https://mirror.example.org/big.iso']],
      [{ ...probed, mirrorsAdvertised: true }, []],
      [{ ...probed, digestAnnounced: true }, []],
    ] as const) {
      const { browser, item, added, watched, outcome } = run({ alwaysTakeOver: false }, probe, [...mirrors]);
      expect(await outcome).toBe('taken');
      expect(watched).toEqual([]);
      expect(added).toHaveLength(1);
      expect(browser.calls).toEqual([`cancel ${item.id}`, `erase ${item.id}`]);
    }
  });

  test("without Always take over, a download one of the user's aria2 rules sends to aria2 is taken at once, unmeasured", async () => {
    let measures = 0;
    const measure = async () => (measures++, 'watch' as const);
    const aria2 = { aria2Url: 'http://127.0.0.1:6800/jsonrpc', aria2MinBytes: 50_000_000 };
    const bySize = run({ alwaysTakeOver: false, ...aria2 }, probed, [], { measure });
    expect(await bySize.outcome).toBe('taken');
    expect(bySize.added).toHaveLength(1);
    const bySite = run({ alwaysTakeOver: false, ...aria2, aria2MinBytes: null, aria2Sites: ['example.com'] }, probed, [], { measure });
    expect(await bySite.outcome).toBe('taken');
    expect(measures).toBe(0);
    // Below the rule's size, and with no endpoint set, it is measured as any other.
    expect(await run({ alwaysTakeOver: false, ...aria2, aria2MinBytes: 200_000_000 }, probed, [], { measure }).outcome).toBe('watched');
    expect(await run({ alwaysTakeOver: false, aria2MinBytes: 50_000_000 }, probed, [], { measure }).outcome).toBe('watched');
    expect(measures).toBe(2);
  });

  test('without Always take over, a download measured faster with Stitch is taken, and its host remembered: the next one is taken unmeasured', async () => {
    const storage = new FakeBrowser().storage;
    const measured: string[] = [];
    const measure = (verdict: 'take' | 'watch') => ({
      cappedHosts: new CappedHosts(storage),
      measure: async (_item: unknown, url: string, size: number) => {
        measured.push(`${url} ${size}`);
        return verdict;
      },
    });
    const first = run({ alwaysTakeOver: false }, probed, [], measure('take'));
    expect(await first.outcome).toBe('taken');
    expect(measured).toEqual(['https://example.com/big.iso 100000000']);
    expect(await new CappedHosts(storage).has('example.com')).toBe(true);

    const second = run({ alwaysTakeOver: false }, probed, [], measure('watch'));
    expect(await second.outcome).toBe('taken');
    expect(measured).toHaveLength(1);
  });

  test('without Always take over, a download measured no faster is watched; one of unknown size or without ranges is watched unmeasured', async () => {
    let measures = 0;
    const measure = async () => {
      measures++;
      return 'watch' as const;
    };
    const watchedOne = run({ alwaysTakeOver: false }, probed, [], { measure });
    expect(await watchedOne.outcome).toBe('watched');
    expect(watchedOne.added).toEqual([]);
    expect(watchedOne.browser.calls).toEqual([]);
    expect(measures).toBe(1);
    for (const probe of [
      { ...probed, size: undefined },
      { ...probed, status: 200 },
    ]) {
      expect(await run({ alwaysTakeOver: false }, probe, [], { measure }).outcome).toBe('watched');
    }
    expect(measures).toBe(1);
  });

  test('with Always take over on, a plain download is taken at once, unmeasured', async () => {
    let measures = 0;
    const measure = async () => (measures++, 'watch' as const);
    const { added, watched, outcome } = run({ alwaysTakeOver: true }, probed, [], { measure });
    expect(await outcome).toBe('taken');
    expect(watched).toEqual([]);
    expect(added).toHaveLength(1);
    expect(measures).toBe(0);
  });
});
