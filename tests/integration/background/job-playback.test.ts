import 'fake-indexeddb/auto';
import * as fake from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import { JobManager } from '../../../src/background/jobs/job-manager';
import { JobMetaStore } from '../../../src/background/jobs/job-meta';
import { PlaybackHub } from '../../../src/background/playback/playback';
import { JobSaver } from '../../../src/background/saving/job-saver';
import { handleRequest } from '../../../src/background/ui/message-handler';
import { SettingsStore } from '../../../src/background/settings-store';
import { UiNotices } from '../../../src/background/ui/ui-notices';
import type { JobView } from '../../../src/messages';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/settings/schema';
import { openIdbStore } from '../../../src/storage/idb-store';
import { startMirror } from '../../support/mirror-server';
import { FakeBrowser } from '../../support/fake-browser';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The job manager with a real (fake-indexeddb) store, a fake browser, and a real loopback server. */
async function setup(settings: Partial<typeof DEFAULT_SETTINGS> = {}) {
  const body = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
  const server = await startMirror({ size: body.length, body, filename: 'clip.webm', contentType: 'video/webm' });
  closers.push(() => server.close());
  const browser = new FakeBrowser();
  const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), name: 'player-test' });
  closers.push(() => store.close());
  const views = new Map<string, JobView>();
  const manager = new JobManager({
    store,
    meta: new JobMetaStore(browser),
    saver: new JobSaver(browser, { make: async (id) => `blob:test/${id}`, revoke: async () => {} }),
    settings: () => parseSettings({ ...DEFAULT_SETTINGS, ...settings }),
    estimate: async () => ({}),
    onView: (v) => views.set(v.id, v),
    onRemoved: () => {},
    onActivity: () => {},
  });
  const deps = {
    api: browser,
    manager,
    settings: new SettingsStore(browser),
    notices: new UiNotices(browser, () => {}),
    mirrorsFor: () => [],
    playback: new PlaybackHub({ jobs: async () => manager.bytes, store: async () => store }),
  };
  const request = async (message: unknown) => handleRequest(message, deps);
  const settled = (id: string, state: string) =>
    new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (views.get(id)?.state === state) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
  return { server, manager, store, request, settled, views };
}

describe('playing a job', () => {
  it('play by URL starts the job once, then finds it again; a saved job keeps its bytes while a player holds them', async () => {
    const t = await setup();
    const first = await t.request({ type: 'play', url: t.server.url });
    expect(first).toMatchObject({ ok: true, value: { started: true } });
    const id = (first as { value: { job: JobView } }).value.job.id;
    const release = t.manager.bytes.holdBytes(id);
    await t.settled(id, 'saved');
    // The player still has every byte; the popup still offers Play.
    expect(await t.store.storedRanges(id)).toEqual([{ start: 0, end: 300_000 }]);
    expect(t.manager.get(id)?.canPlay).toBe(true);
    expect(t.manager.bytes.bytesFreed(id)).toBe(false);
    const again = await t.request({ type: 'play', url: t.server.url });
    expect(again).toMatchObject({ ok: true, value: { started: false, job: { id } } });
    // The last player leaves: the stored copy goes.
    release();
    await expect.poll(() => t.manager.bytes.bytesFreed(id)).toBe(true);
    expect(await t.store.storedRanges(id)).toEqual([]);
    expect(t.manager.get(id)?.canPlay).toBeUndefined();
    // Playing the URL again now needs a new download.
    expect(await t.request({ type: 'play', url: t.server.url })).toMatchObject({ ok: true, value: { started: true } });
    expect(await t.request({ type: 'play', id: 'nope' })).toMatchObject({ ok: false });
    expect(await t.request({ type: 'play', url: 'ftp://x/y' })).toMatchObject({ ok: false });
  });

  it('a download started by Play fetches its start first, before the player has read a byte', async () => {
    const t = await setup();
    const MiB = 1024 * 1024;
    const server = await startMirror({ size: 32 * MiB, rate: MiB, filename: 'film.webm', contentType: 'video/webm' });
    closers.push(() => server.close());
    const played = (await t.request({ type: 'play', url: server.url })) as { value: { job: JobView } };
    // 1 s at 1 MiB/s: the start (its first 2 MiB, the player's bytes while its bitrate is unknown) is still
    // coming, and no block elsewhere in the file shares the server with it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const starts = server.stats.requests.map((r) => Number(/bytes=(\d+)-/.exec(r.range ?? '')?.[1] ?? 0));
    expect(starts.length).toBeGreaterThan(0);
    expect(Math.max(...starts)).toBeLessThan(2 * MiB);
    await t.manager.act(played.value.job.id, 'cancel');
  });

  it('a download a player waits for starts at once, past the limit of concurrent downloads', async () => {
    const t = await setup({ maxConcurrentJobs: 1 });
    const busy = await startMirror({ size: 8_000_000, rate: 500_000 });
    closers.push(() => busy.close());
    const ahead = (await t.request({ type: 'add-url', url: busy.url })) as { value: { job: JobView } };
    const queued = (await t.request({ type: 'add-url', url: t.server.url })) as { value: { job: JobView } };
    expect(queued.value.job.state).toBe('queued');
    const played = await t.request({ type: 'play', id: queued.value.job.id });
    expect(played).toMatchObject({ ok: true, value: { started: false } });
    // Saved while the 8 MB ahead of it (16 s at its rate) still downloads: it did not wait for a free slot.
    await t.settled(queued.value.job.id, 'saved');
    // The download ahead of it kept running: nothing was stopped to make room.
    expect(t.views.get(ahead.value.job.id)?.state).toBe('running');
  });
});
