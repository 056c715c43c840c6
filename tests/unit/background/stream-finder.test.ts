import { describe, expect, it } from 'vitest';
import { StreamFinder, type FoundStream, type StreamDescription } from '../../../src/background/streams/stream-finder';
import type { StreamRow } from '../../../src/messages';
import { createContextMenu, STREAM_MENU_ID, streamTabFromClick } from '../../../src/background/ui/context-menu';
import { FakeBrowser } from '../../support/fake-browser';

const MASTER = 'https://video.example/show/master.m3u8';
const VARIANT = 'https://video.example/show/v2/index.m3u8';

/** A finder whose playlists describe as `descriptions` says, its saves and broadcasts recorded. */
function finder(descriptions: Record<string, StreamDescription | Error>, stored: unknown = undefined) {
  const saved: FoundStream[][] = [];
  const read: string[] = [];
  const broadcasts: StreamRow[][] = [];
  const tabs: Record<number, { title: string; url: string }> = {
    1: { title: 'A show — Episode 1', url: 'https://site.example/watch/1' },
    2: { title: 'Another page', url: 'https://other.example/' },
    3: { title: 'My camera', url: 'http://192.168.1.20/live.html' },
  };
  const streams = new StreamFinder({
    describe: (found) => {
      read.push(found.url);
      const description = descriptions[found.url];
      return description instanceof Error ? Promise.reject(description) : Promise.resolve(description ?? { covers: [] });
    },
    tab: (tabId) => Promise.resolve(tabs[tabId]),
    load: () => Promise.resolve(stored),
    save: (found) => {
      saved.push(JSON.parse(JSON.stringify(found)) as FoundStream[]);
      return Promise.resolve();
    },
    onChange: (rows) => broadcasts.push(rows),
    now: () => 1000,
  });
  return { streams, saved, broadcasts, read };
}

const described: StreamDescription = { width: 1280, height: 720, bandwidth: 3_000_000, durationSeconds: 600, covers: [VARIANT] };

describe('StreamFinder', () => {
  it("reads only what a tab's player loaded: a master's length comes from the media playlist the player picks", async () => {
    const master: StreamDescription = { width: 1280, height: 720, bandwidth: 3_000_000, covers: [VARIANT] };
    const { streams, read } = finder({ [MASTER]: master, [VARIANT]: { durationSeconds: 600, covers: [VARIANT] } });
    await streams.seen(MASTER, 1);
    expect(read).toEqual([MASTER]);
    expect(streams.rows()[0]!.durationSeconds).toBeUndefined();
    await streams.seen(VARIANT, 1);
    await streams.seen(VARIANT, 1);
    expect(read).toEqual([MASTER, VARIANT]);
    expect(streams.rows()).toMatchObject([{ url: MASTER, durationSeconds: 600, estimatedBytes: 225_000_000 }]);
  });

  it('takes the length of a media playlist read before its master answered', async () => {
    const { streams } = finder({
      [MASTER]: { bandwidth: 3_000_000, covers: [VARIANT] },
      [VARIANT]: { durationSeconds: 600, covers: [VARIANT] },
    });
    await streams.seen(VARIANT, 1);
    await streams.seen(MASTER, 1);
    expect(streams.rows()).toMatchObject([{ url: MASTER, durationSeconds: 600 }]);
  });

  it('takes the length of a media playlist whose read ends after its master was read', async () => {
    const answers = new Map<string, (description: StreamDescription) => void>();
    const streams = new StreamFinder({
      describe: (found) => new Promise((settle) => answers.set(found.url, settle)),
      tab: () => Promise.resolve({ title: 'A show', url: 'https://site.example/watch/1' }),
      load: () => Promise.resolve(undefined),
      save: () => Promise.resolve(),
      onChange: () => {},
      now: () => 1000,
    });
    const masterSeen = streams.seen(MASTER, 1);
    const variantSeen = streams.seen(VARIANT, 1);
    await expect.poll(() => answers.size).toBe(2);
    answers.get(MASTER)!({ bandwidth: 3_000_000, covers: [VARIANT] });
    await masterSeen;
    answers.get(VARIANT)!({ durationSeconds: 600, covers: [VARIANT] });
    await variantSeen;
    expect(streams.rows()).toMatchObject([{ url: MASTER, durationSeconds: 600 }]);
    expect(streams.rows()).toHaveLength(1);
  });

  it("never reads a playlist on the user's network after a public page, and lists none", async () => {
    const { streams, read } = finder({});
    for (const url of [
      'http://127.0.0.1/cgi-bin/reboot.cgi',
      'http://192.168.1.1/a.m3u8',
      'http://[::1]/x.m3u8',
      'http://printer.localhost/x.m3u8',
    ]) {
      await streams.seen(url, 1);
    }
    expect(read).toEqual([]);
    expect(streams.rows()).toEqual([]);
    // A page on the user's network may show its own streams.
    await streams.seen('http://192.168.1.20/cam.m3u8', 3);
    expect(read).toEqual(['http://192.168.1.20/cam.m3u8']);
  });

  it('lists a playlist a tab loaded under the page title, with what reading it told', async () => {
    const { streams, broadcasts } = finder({ [MASTER]: described });
    await streams.seen(MASTER, 1);
    expect(streams.rows()).toEqual([
      {
        url: MASTER,
        title: 'A show — Episode 1',
        host: 'site.example',
        width: 1280,
        height: 720,
        bandwidth: 3_000_000,
        durationSeconds: 600,
        estimatedBytes: 225_000_000,
      },
    ]);
    // Listed at once, then again once described.
    expect(broadcasts).toHaveLength(2);
    expect(broadcasts[0]![0]!.width).toBeUndefined();
  });

  it("lists a master playlist's qualities, best first, each with the size its download would have", async () => {
    const variants = [
      { width: 1280, height: 720, bandwidth: 3_000_000 },
      { width: 640, height: 360, bandwidth: 800_000 },
    ];
    const { streams } = finder({ [MASTER]: { ...described, variants } });
    await streams.seen(MASTER, 1);
    expect(streams.rows()[0]!.variants).toEqual([
      { width: 1280, height: 720, bandwidth: 3_000_000, estimatedBytes: 225_000_000 },
      { width: 640, height: 360, bandwidth: 800_000, estimatedBytes: 60_000_000 },
    ]);
  });

  it("does not list a master playlist's own media playlists, whichever the player loads first", async () => {
    const after = finder({ [MASTER]: described });
    await after.streams.seen(MASTER, 1);
    await after.streams.seen(VARIANT, 1);
    expect(after.streams.rows().map((r) => r.url)).toEqual([MASTER]);
    const before = finder({ [MASTER]: described });
    await before.streams.seen(VARIANT, 1);
    await before.streams.seen(MASTER, 1);
    expect(before.streams.rows().map((r) => r.url)).toEqual([MASTER]);
    // Another tab's copy of the same variant is its own stream.
    await before.streams.seen(VARIANT, 2);
    expect(before.streams.rows().map((r) => `${r.url} ${r.title}`)).toEqual([`${VARIANT} Another page`, `${MASTER} A show — Episode 1`]);
  });

  it('lists a media playlist loaded alone (it covers itself)', async () => {
    const { streams } = finder({ [VARIANT]: { durationSeconds: 30, covers: [VARIANT] } });
    await streams.seen(VARIANT, 1);
    expect(streams.rows().map((r) => r.url)).toEqual([VARIANT]);
  });

  it('takes a playlist asked again with another query (a live player, a token) as the same stream', async () => {
    const { streams } = finder({ [MASTER]: described });
    await streams.seen(MASTER, 1);
    await streams.seen(`${MASTER}?token=2`, 1);
    await streams.seen(`${VARIANT}?_HLS_msn=40`, 1);
    expect(streams.rows().map((r) => r.url)).toEqual([MASTER]);
  });

  it('says why a refused stream cannot be downloaded, and marks one whose playlist could not be read', async () => {
    const { streams } = finder({ [MASTER]: { refused: 'live', covers: [] }, [VARIANT]: new Error('403') });
    await streams.seen(MASTER, 1);
    await streams.seen(VARIANT, 2);
    expect(streams.rows().map((r) => [r.url, r.refused, r.unread])).toEqual([
      [VARIANT, undefined, true],
      [MASTER, 'live', undefined],
    ]);
  });

  it("forgets a tab's streams when it loads another page or closes, and all of them when the browser starts", async () => {
    const { streams } = finder({});
    await streams.seen(MASTER, 1);
    await streams.seen(VARIANT, 2);
    await streams.navigated(1);
    expect(streams.rows().map((r) => r.url)).toEqual([VARIANT]);
    await streams.clear();
    expect(streams.rows()).toEqual([]);
  });

  it('keeps its list across a restart of the worker, and refuses a damaged one', async () => {
    const first = finder({ [MASTER]: described });
    await first.streams.seen(MASTER, 1);
    const kept = first.saved.at(-1);
    const second = finder({}, kept);
    await second.streams.restore();
    expect(second.streams.rows()).toEqual(first.streams.rows());
    const damaged = finder({}, [{ url: 5 }, 'x', null]);
    await damaged.streams.restore();
    expect(damaged.streams.rows()).toEqual([]);
  });

  it('keeps at most 10 streams of a tab, the newest', async () => {
    const { streams } = finder({});
    for (let i = 0; i < 12; i++) await streams.seen(`https://video.example/${i}.m3u8`, 1);
    const urls = streams.rows().map((r) => r.url);
    expect(urls).toHaveLength(10);
    expect(urls[0]).toBe('https://video.example/11.m3u8');
    expect(urls).not.toContain('https://video.example/0.m3u8');
  });
});

describe('"Download video with Stitch"', () => {
  it('is a menu entry on pages and videos, and names the tab it was clicked in', async () => {
    const browser = new FakeBrowser();
    const added: { id: string; contexts: string[] }[] = [];
    await createContextMenu({ ...browser, menus: { ...browser.menus, add: async (entry) => void added.push(entry) } }, false);
    expect(added.find((entry) => entry.id === STREAM_MENU_ID)).toEqual({
      id: STREAM_MENU_ID,
      title: 'Download video with Stitch',
      contexts: ['page', 'video'],
    });
    expect(streamTabFromClick({ menuItemId: STREAM_MENU_ID, tabId: 4, pageUrl: 'https://site.example/' })).toBe(4);
    expect(streamTabFromClick({ menuItemId: STREAM_MENU_ID, tabId: -1 })).toBeUndefined();
    expect(streamTabFromClick({ menuItemId: 'stitch-download', tabId: 4 })).toBeUndefined();
  });

  it("takes the tab's last stream that is not refused", async () => {
    const { streams } = finder({ [VARIANT]: { refused: 'live', covers: [] } });
    await streams.seen(MASTER, 1);
    await streams.seen(VARIANT, 1);
    await streams.seen('https://video.example/other.m3u8', 2);
    expect(streams.lastOfTab(1)?.url).toBe(MASTER);
    expect(streams.lastOfTab(3)).toBeUndefined();
  });
});
