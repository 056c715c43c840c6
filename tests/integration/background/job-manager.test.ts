import 'fake-indexeddb/auto';
import * as fake from 'fake-indexeddb';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { BlobUrlMaker } from '../../../src/background/saving/blob-url';
import { JobManager } from '../../../src/background/jobs/job-manager';
import { JobMetaStore } from '../../../src/background/jobs/job-meta';
import { JobSaver } from '../../../src/background/saving/job-saver';
import { ReferrerRules, urlFilterFor } from '../../../src/background/network/referrer-rules';
import { handleRequest } from '../../../src/background/ui/message-handler';
import { SettingsStore } from '../../../src/background/settings-store';
import { UiNotices } from '../../../src/background/ui/ui-notices';
import type { JobView } from '../../../src/messages';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../../src/settings/schema';
import { openIdbStore, type IdbStore } from '../../../src/storage/idb-store';
import { startMirror, type Mirror } from '../../support/mirror-server';
import { FakeBrowser } from '../../support/fake-browser';

const MiB = 1024 * 1024;
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function server(size: number, rate?: number): Promise<Mirror> {
  const m = await startMirror({ size, seed: size % 97, filename: `f${size}.bin`, rate });
  closers.push(() => m.close());
  return m;
}

/** Fake blob URLs: records which jobs were turned into URLs and revoked. */
function blobUrls(): BlobUrlMaker & { made: string[]; revoked: string[] } {
  const made: string[] = [];
  const revoked: string[] = [];
  return {
    made,
    revoked,
    make: async (jobId, size) => {
      made.push(`${jobId}:${size}`);
      return `blob:test/${jobId}`;
    },
    revoke: async (url) => void revoked.push(url),
  };
}

interface Harness {
  manager: JobManager;
  browser: FakeBrowser;
  store: IdbStore;
  views: Map<string, JobView>;
  activity: { active: boolean; unfinished: boolean }[];
}

function harness(options: {
  browser?: FakeBrowser;
  store: IdbStore;
  settings?: Partial<Settings>;
  free?: number;
  /** The disk's free bytes, changed by the test as it goes (beats `free`). */
  disk?: { free: number };
  referrers?: ReferrerRules;
  undoMs?: number;
}): Harness {
  const browser = options.browser ?? new FakeBrowser();
  const views = new Map<string, JobView>();
  const activity: Harness['activity'] = [];
  const settings = parseSettings({ ...DEFAULT_SETTINGS, ...options.settings });
  const manager = new JobManager({
    store: options.store,
    meta: new JobMetaStore(browser),
    saver: new JobSaver(browser, blobUrls()),
    settings: () => settings,
    estimate: async () => ({ quota: options.disk?.free ?? options.free ?? 1e12, usage: 0 }),
    onView: (v) => views.set(v.id, v),
    onRemoved: (id) => views.delete(id),
    onActivity: (active, unfinished) => activity.push({ active, unfinished }),
    spaceCheckMs: 50,
    referrers: options.referrers,
    undoMs: options.undoMs ?? 0,
  });
  return { manager, browser, store: options.store, views, activity };
}

/** What the message handler needs, around a harness. */
function requestDeps(h: Harness) {
  return {
    api: h.browser,
    manager: h.manager,
    settings: new SettingsStore(h.browser),
    notices: new UiNotices(h.browser, () => {}),
    mirrorsFor: () => [],
  };
}

async function store(): Promise<IdbStore> {
  const s = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'bytes' });
  closers.push(() => s.close());
  return s;
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A job whose download finished and whose save the fake browser holds open until the test finishes it. */
async function heldAtSave(size: number, disk?: { free: number }) {
  const m = await server(size);
  const browser = new FakeBrowser();
  browser.autoComplete = false;
  const h = harness({ store: await store(), browser, disk });
  const job = await h.manager.add({ url: m.url });
  await until('saving', () => browser.calls.some((c) => c.startsWith('download')));
  return { browser, h, job };
}

describe('JobManager', () => {
  test('downloads, saves under the server name with uniquify, then frees the stored bytes', async () => {
    const m = await server(3 * MiB);
    const h = harness({ store: await store() });
    const job = await h.manager.add({ url: m.url });
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
    const download = [...h.browser.items.values()].find((i) => i.byExtensionId === h.browser.extensionId)!;
    expect(download.request).toMatchObject({
      url: `blob:test/${job.id}`,
      filename: 'f3145728.bin',
      conflictAction: 'uniquify',
      saveAs: false,
    });
    expect(await h.store.storedRanges(job.id)).toEqual([]);
    expect(h.views.get(job.id)).toMatchObject({ received: 3 * MiB, size: 3 * MiB, savedDownloadId: download.id });
    expect(h.activity.at(-1)).toEqual({ active: false, unfinished: false });
  });

  test('keeps the bytes and says why when the browser fails to save; retry saves again', async () => {
    const { browser, h, job } = await heldAtSave(1 * MiB);
    const first = [...browser.items.keys()].at(-1)!;
    browser.finishDownload(first, 'interrupted', 'FILE_NO_SPACE');
    await until('failed', () => h.views.get(job.id)?.state === 'failed');
    // The store's disk has room: the download folder is on another, full one.
    expect(h.views.get(job.id)).toMatchObject({ errorCode: 'save-folder-full', error: expect.stringMatching(/download folder is full/) });
    expect(await h.store.storedRanges(job.id)).toEqual([{ start: 0, end: 1 * MiB }]);

    browser.autoComplete = true;
    await h.manager.act(job.id, 'retry');
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
  });

  test('a disk that fills during the save: said in words of room, checked again before the next save, saved once there is room', async () => {
    const disk = { free: 1e12 };
    const { browser, h, job } = await heldAtSave(1 * MiB, disk);
    disk.free = 10 * MiB;
    // Chrome ends a save whose writes fail on a full disk with FILE_FAILED.
    browser.finishDownload([...browser.items.keys()].at(-1)!, 'interrupted', 'FILE_FAILED');
    await until('failed', () => h.views.get(job.id)?.state === 'failed');
    expect(h.views.get(job.id)).toMatchObject({ errorCode: 'save-no-room', failure: { room: { needed: 33 * MiB, free: 10 * MiB } } });
    const asked = browser.items.size;
    await h.manager.act(job.id, 'retry');
    await until('failed again', () => h.views.get(job.id)?.state === 'failed');
    expect(browser.items.size).toBe(asked); // refused before the browser was asked to copy the file
    expect(await h.store.storedRanges(job.id)).toEqual([{ start: 0, end: 1 * MiB }]);

    disk.free = 1e12;
    browser.autoComplete = true;
    await h.manager.act(job.id, 'retry');
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
  });

  test('a download the disk cannot hold twice (stored, then saved) is held before its first request, saying how much room it needs', async () => {
    const m = await server(4 * MiB);
    const h = harness({ store: await store(), free: 20 * MiB });
    const job = await h.manager.add({ url: m.url, probed: { size: 4 * MiB } });
    await until('held', () => h.views.get(job.id)?.state === 'paused');
    expect(h.views.get(job.id)).toMatchObject({ errorCode: 'storage-full', failure: { room: { needed: 40 * MiB, free: 20 * MiB } } });
  });

  test('a failed save can be saved again asking where; other jobs refuse Save as in plain words', async () => {
    const { browser, h, job } = await heldAtSave(1 * MiB);
    browser.finishDownload([...browser.items.keys()].at(-1)!, 'interrupted', 'FILE_NO_SPACE');
    await until('failed', () => h.views.get(job.id)?.state === 'failed');

    browser.autoComplete = true;
    const reply = await handleRequest({ type: 'save-as', id: job.id }, requestDeps(h));
    expect(reply.ok).toBe(true);
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
    const again = [...browser.items.values()].at(-1)!;
    expect(again.request).toMatchObject({ saveAs: true, filename: 'f1048576.bin' });
    const refused = await handleRequest({ type: 'save-as', id: job.id }, requestDeps(h));
    expect(refused).toMatchObject({ ok: false, error: 'Only a finished download whose saving failed can be saved again.' });
  });

  test('once saved, the row shows the name the browser wrote, not the one asked for', async () => {
    const { browser, h, job } = await heldAtSave(1 * MiB);
    const id = [...browser.items.keys()].at(-1)!;
    browser.items.get(id)!.filename = '/home/user/Downloads/f1048576 (1).bin';
    browser.finishDownload(id, 'complete');
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
    expect(h.views.get(job.id)?.filename).toBe('f1048576 (1).bin');
  });

  test('runs at most maxConcurrentJobs at once; the rest wait as queued', async () => {
    const a = await server(2 * MiB, 4 * MiB);
    const b = await server(1 * MiB);
    const h = harness({ store: await store(), settings: { maxConcurrentJobs: 1 } });
    const first = await h.manager.add({ url: a.url });
    const second = await h.manager.add({ url: b.url });
    expect(h.manager.get(second.id)?.state).toBe('queued');
    expect(b.stats.requests).toHaveLength(0);
    await until('both saved', () => h.views.get(first.id)?.state === 'saved' && h.views.get(second.id)?.state === 'saved');
    expect(b.stats.requests[0]!.startedAt).toBeGreaterThanOrEqual(a.stats.requests.at(-1)!.endedAt! - 5);
  });

  test('a user pause survives a restart; other unfinished jobs resume by themselves', async () => {
    const slow = await server(4 * MiB, 1 * MiB);
    const other = await server(4 * MiB, 1 * MiB);
    const s = await store();
    const browser = new FakeBrowser();
    const before = harness({ store: s, browser });
    const paused = await before.manager.add({ url: slow.url });
    const running = await before.manager.add({ url: other.url });
    await until('bytes', () => slow.stats.bytesSent > 512 * 1024 && other.stats.bytesSent > 512 * 1024);
    await before.manager.act(paused.id, 'pause');
    expect(before.manager.get(paused.id)).toMatchObject({ state: 'paused', pausedByUser: true });
    // The worker dies: the old manager's transfer is stopped without any state change of ours.
    await before.manager.act(running.id, 'pause');
    await browser.storage.set(`job-meta:${running.id}`, {
      ...((await browser.storage.get(`job-meta:${running.id}`)) as object),
      pausedByUser: false,
    });

    const after = harness({ store: s, browser });
    await after.manager.restore();
    expect(after.manager.get(paused.id)).toMatchObject({ state: 'paused', pausedByUser: true });
    expect(after.manager.get(paused.id)!.received).toBeGreaterThan(0);
    await until('resumed and saved', () => after.views.get(running.id)?.state === 'saved', 15_000);
    const resumedFrom = Number(/bytes=(\d+)-/.exec(other.stats.requests.at(-1)!.range ?? '')?.[1]);
    expect(resumedFrom).toBeGreaterThan(0);
    expect(after.manager.get(paused.id)?.state).toBe('paused');
  });

  test("a job keeps whether it may send cookies, and to which mirrors' origins, across a restart", async () => {
    const file = await server(MiB, MiB / 2);
    const s = await store();
    const browser = new FakeBrowser();
    const host = new URL(file.url).host;
    const rule = {
      pattern: `${host}/`,
      mirrors: ['https://m1.example.org/pub/', 'https://m2.example.org/'],
      passQuery: false,
      sendCookies: true,
    };
    const before = harness({ store: s, browser, settings: { mirrorRules: [rule] } });
    const taken = await before.manager.add({ url: file.url, credentials: 'omit' });
    const chosen = await before.manager.add({ url: file.url });
    await before.manager.act(taken.id, 'pause');
    await before.manager.act(chosen.id, 'pause');

    const after = harness({ store: s, browser });
    await after.manager.restore();
    expect(after.manager.meta(taken.id)).toMatchObject({ credentials: 'omit', cookieOrigins: [] });
    expect(after.manager.meta(chosen.id)).toMatchObject({
      credentials: 'include',
      cookieOrigins: ['https://m1.example.org', 'https://m2.example.org'],
    });
  });

  test('pauses a running job when storage runs low, keeps its bytes, and will not restart it without space', async () => {
    const m = await server(4 * MiB, 1 * MiB);
    const h = harness({ store: await store(), free: 1 * MiB });
    const job = await h.manager.add({ url: m.url });
    await until('held', () => h.views.get(job.id)?.state === 'paused');
    expect(h.views.get(job.id)).toMatchObject({
      errorCode: 'storage-full',
      error: expect.stringMatching(/storage almost full/),
      pausedByUser: false,
    });
    const kept = await h.store.storedRanges(job.id);
    const requests = m.stats.requests.length;

    await h.manager.act(job.id, 'resume');
    await until(
      'held again',
      () => h.views.get(job.id)?.state === 'paused' && h.views.get(job.id)?.error?.includes('not enough room on the disk') === true,
    );
    // What it still needs (the rest of the file and the save's copy) and what is free, for the pages' words.
    expect(h.views.get(job.id)?.failure?.room?.free).toBe(1 * MiB);
    expect(m.stats.requests.length).toBe(requests); // not started: the size is known and does not fit
    expect(await h.store.storedRanges(job.id)).toEqual(kept);
  });

  test('cancel forgets the job and its bytes; clear-finished removes saved ones', async () => {
    const m = await server(1 * MiB);
    const slow = await server(4 * MiB, 512 * 1024);
    const h = harness({ store: await store() });
    const done = await h.manager.add({ url: m.url });
    const cancelled = await h.manager.add({ url: slow.url });
    await until('saved', () => h.views.get(done.id)?.state === 'saved');
    await h.manager.act(cancelled.id, 'cancel');
    expect(h.views.has(cancelled.id)).toBe(false);
    expect(await h.store.listJobs()).toEqual([done.id]);
    expect(await h.manager.clearFinished()).toBe(1);
    expect(await h.store.listJobs()).toEqual([]);
  });
});

describe('JobManager: undo', () => {
  test('cancel keeps the job paused with its bytes until the undo expires; undo resumes it', async () => {
    const slow = await server(4 * MiB, 1 * MiB);
    const h = harness({ store: await store(), undoMs: 400 });
    const job = await h.manager.add({ url: slow.url });
    await until('some bytes', () => (h.views.get(job.id)?.received ?? 0) > 256 * 1024);
    const cancelled = await h.manager.act(job.id, 'cancel');
    expect(cancelled).toMatchObject({ state: 'paused', undoUntil: expect.any(Number) });
    const stored = await h.store.storedRanges(job.id);
    expect(stored.length).toBeGreaterThan(0);
    await h.manager.act(job.id, 'undo');
    expect(h.views.get(job.id)).toMatchObject({ undoUntil: undefined });
    await until('running again', () => h.views.get(job.id)?.state === 'running');
    await new Promise((r) => setTimeout(r, 600));
    expect(h.views.has(job.id)).toBe(true); // the expired timer of the undone cancel removed nothing

    await h.manager.act(job.id, 'cancel');
    expect(await h.store.listJobs()).toEqual([job.id]);
    await until('removed', () => !h.views.has(job.id), 2_000);
    expect(await h.store.listJobs()).toEqual([]);
  });

  test('clear-finished keeps a failed job that holds bytes to retry, and a saved row can be removed alone', async () => {
    const saved = await server(1 * MiB);
    const flaky = await server(4 * MiB, 1 * MiB);
    const h = harness({ store: await store() });
    const done = await h.manager.add({ url: saved.url });
    const failing = await h.manager.add({ url: flaky.url });
    await until('saved', () => h.views.get(done.id)?.state === 'saved');
    await until('some bytes', () => (h.views.get(failing.id)?.received ?? 0) > 256 * 1024);
    flaky.setFaults({ errorStatus: { status: 404 } });
    flaky.dropConnections();
    await until('failed', () => h.views.get(failing.id)?.state === 'failed', 15_000);
    expect(await h.manager.clearFinished()).toBe(1);
    expect([...h.views.keys()]).toEqual([failing.id]);
    await h.manager.act(failing.id, 'cancel');
    expect(h.views.size).toBe(0);
  });
});

describe('JobManager: the Referer rule of each job', () => {
  const PAGE = 'https://www.example.com/downloads';
  const SENT = 'https://www.example.com/'; // what browsers send from PAGE to another origin
  const refererOf = (browser: FakeBrowser) => browser.rules.map((r) => [r.condition.urlFilter, r.action.requestHeaders?.[0]?.value]);

  test('is in place while the job runs, and removed once it is saved', async () => {
    const m = await server(2 * MiB, 2 * MiB);
    const browser = new FakeBrowser();
    const h = harness({ store: await store(), browser, referrers: new ReferrerRules(browser) });
    const job = await h.manager.add({ url: m.url, referrer: PAGE });
    // Set before the job's first request.
    await until('first request', () => m.stats.requests.length > 0);
    expect(refererOf(browser)).toEqual([[urlFilterFor(m.url), SENT]]);
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
    await until('rule removed', () => browser.rules.length === 0);
    expect(browser.calls.filter((c) => c.startsWith('rules'))).toEqual(['rules +1', 'rules -1']);
  });

  test('is removed when the job is cancelled or paused, and set again on resume', async () => {
    const m = await server(4 * MiB, 1 * MiB);
    const other = await server(4 * MiB, 1 * MiB);
    const browser = new FakeBrowser();
    const h = harness({ store: await store(), browser, referrers: new ReferrerRules(browser) });
    const paused = await h.manager.add({ url: m.url, referrer: PAGE });
    const cancelled = await h.manager.add({ url: other.url, referrer: 'https://other.example/' });
    await until('both rules', () => browser.rules.length === 2);
    expect(refererOf(browser)).toEqual([
      [urlFilterFor(m.url), SENT],
      [urlFilterFor(other.url), 'https://other.example/'],
    ]);
    await h.manager.act(cancelled.id, 'cancel');
    await until('cancelled job’s rule removed', () => browser.rules.length === 1);
    expect(refererOf(browser)).toEqual([[urlFilterFor(m.url), SENT]]);
    await h.manager.act(paused.id, 'pause');
    await until('paused job’s rule removed', () => browser.rules.length === 0);
    await h.manager.act(paused.id, 'resume');
    await until('set again', () => browser.rules.length === 1);
    expect(refererOf(browser)).toEqual([[urlFilterFor(m.url), SENT]]);
    // Cancelled at once, while the job is only starting: it never runs nor saves.
    await h.manager.act(paused.id, 'cancel');
    await until('removed', () => browser.rules.length === 0);
    expect(await h.store.listJobs()).toEqual([]);
    expect(browser.calls.filter((c) => c.startsWith('download'))).toEqual([]);
  });

  test('a job without a referrer sets none', async () => {
    const m = await server(1 * MiB);
    const browser = new FakeBrowser();
    const h = harness({ store: await store(), browser, referrers: new ReferrerRules(browser) });
    const job = await h.manager.add({ url: m.url });
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
    expect(browser.calls.filter((c) => c.startsWith('rules'))).toEqual([]);
  });

  test('after a browser restart (session rules gone) the restored job sets its rule again; stale ones are removed', async () => {
    const m = await server(4 * MiB, 1 * MiB);
    const s = await store();
    const browser = new FakeBrowser();
    const before = harness({ store: s, browser, referrers: new ReferrerRules(browser) });
    const job = await before.manager.add({ url: m.url, referrer: PAGE });
    await until('bytes', () => m.stats.bytesSent > 256 * 1024);
    // The browser dies: the transfer stops without a state change of ours, the session rules go.
    await before.manager.act(job.id, 'pause');
    await browser.storage.set(`job-meta:${job.id}`, {
      ...((await browser.storage.get(`job-meta:${job.id}`)) as object),
      pausedByUser: false,
    });
    browser.rules = [];

    const referrers = new ReferrerRules(browser);
    const after = harness({ store: s, browser, referrers });
    await after.manager.restore();
    await until('set again', () => browser.rules.length === 1);
    expect(refererOf(browser)).toEqual([[urlFilterFor(m.url), SENT]]);
    await until('saved', () => after.views.get(job.id)?.state === 'saved', 15_000);
    await until('removed', () => browser.rules.length === 0);
  });

  test('after a worker restart (session rules kept) the rule of a job gone meanwhile is removed, the running one kept', async () => {
    const m = await server(4 * MiB, 1 * MiB);
    const gone = await server(1 * MiB, 256 * 1024);
    const s = await store();
    const browser = new FakeBrowser();
    const before = harness({ store: s, browser, referrers: new ReferrerRules(browser) });
    const job = await before.manager.add({ url: m.url, referrer: PAGE });
    const cancelled = await before.manager.add({ url: gone.url, referrer: PAGE });
    await until('both rules', () => browser.rules.length === 2);
    await before.manager.act(job.id, 'pause');
    await browser.storage.set(`job-meta:${job.id}`, {
      ...((await browser.storage.get(`job-meta:${job.id}`)) as object),
      pausedByUser: false,
    });
    // Its rule survives as if the worker had died before removing it; the job itself is gone.
    const leftOver = structuredClone(browser.rules);
    await before.manager.act(cancelled.id, 'cancel');
    await until('removed', () => browser.rules.length === 0);
    browser.rules = leftOver;
    browser.calls.length = 0;

    // A new worker: background.ts syncs at start, then restores.
    const referrers = new ReferrerRules(browser);
    const after = harness({ store: s, browser, referrers });
    await referrers.sync();
    await after.manager.restore();
    await until('only the running job’s rule', () => browser.rules.length === 1);
    expect(refererOf(browser)).toEqual([[urlFilterFor(m.url), SENT]]);
    await after.manager.act(job.id, 'cancel');
    await until('none', () => browser.rules.length === 0);
  });
});

describe('JobManager: a new link gets the request rules of its own address', () => {
  const PUBLIC = 'files.example';
  const PAGE = 'http://127.0.0.1/downloads';
  afterEach(() => vi.unstubAllGlobals());

  /**
   * The engine's fetch, recording what each request carried. It stands in for DNS, too:
   * PUBLIC is the loopback address (no test may leave the machine).
   */
  function recordRequests() {
    const real = globalThis.fetch;
    const sent: { url: string; credentials?: RequestCredentials; referrer?: string }[] = [];
    vi.stubGlobal('fetch', (url: string, init?: RequestInit) => {
      sent.push({ url, credentials: init?.credentials, referrer: init?.referrer });
      return real(url.replace(`//${PUBLIC}:`, '//127.0.0.1:'), init);
    });
    return sent;
  }

  const publicUrl = (m: Mirror) => m.url.replace('127.0.0.1', PUBLIC);

  /** A job the user chose at `old` (cookies allowed, a page's Referer), paused with part of its bytes stored. */
  async function pausedJob(h: Harness, old: Mirror): Promise<JobView> {
    const job = await h.manager.add({ url: old.url, referrer: PAGE });
    await until('bytes', () => old.stats.bytesSent > 1 * MiB);
    await h.manager.act(job.id, 'pause');
    return job;
  }

  test("another site's address gets the job's cookies, and not the old page as Referer", async () => {
    const sent = recordRequests();
    const old = await startMirror({ size: 4 * MiB, seed: 31, rate: 1 * MiB });
    const renewed = await startMirror({ size: 4 * MiB, seed: 31, rate: 2 * MiB });
    closers.push(
      () => old.close(),
      () => renewed.close(),
    );
    const browser = new FakeBrowser();
    const h = harness({ store: await store(), browser, referrers: new ReferrerRules(browser) });
    const job = await pausedJob(h, old);
    const url = publicUrl(renewed);

    const reply = await h.manager.relink(job.id, url);
    expect(reply.mismatch).toBeUndefined();
    expect(reply.job.url).toBe(url);
    await until('downloading from the new address', () => renewed.stats.requests.length > 10);
    expect(browser.rules.map((r) => r.condition.urlFilter)).not.toContain(urlFilterFor(url));
    await until('saved', () => h.views.get(job.id)?.state === 'saved');
    const toNew = sent.filter((s) => s.url === url);
    expect(toNew.length).toBe(renewed.stats.requests.length);
    for (const s of toNew) expect(s).toEqual({ url, credentials: 'include', referrer: undefined });
    expect(h.manager.meta(job.id)).toMatchObject({ credentials: 'include', referrer: undefined, cookieOrigins: [] });
  });

  test('a public address may not redirect into the local network, though the old address was in it', async () => {
    recordRequests();
    const old = await startMirror({ size: 4 * MiB, seed: 32, rate: 1 * MiB });
    const inside = await startMirror({ size: 4 * MiB, seed: 32 });
    const outside = await startMirror({ size: 4 * MiB, seed: 32, redirect: { location: inside.url } });
    closers.push(
      () => old.close(),
      () => inside.close(),
      () => outside.close(),
    );
    const h = harness({ store: await store() });
    const job = await pausedJob(h, old);
    const url = publicUrl(outside);

    await expect(h.manager.relink(job.id, url)).rejects.toThrow(
      `${url} redirected to ${inside.url} is on a local or private network address, and the download is not`,
    );
    expect(outside.stats.requests).toHaveLength(1);
    expect(inside.stats.requests).toEqual([]);
    expect(h.manager.get(job.id)).toMatchObject({ url: old.url, state: 'paused' });
  });
});

describe('message handler', () => {
  test('answers bad requests with a plain error, never throwing', async () => {
    const browser = new FakeBrowser();
    const h = harness({ store: await store(), browser });
    const deps = {
      api: browser,
      manager: h.manager,
      settings: new SettingsStore(browser),
      notices: new UiNotices(browser, () => {}),
      mirrorsFor: () => [],
    };
    expect(await handleRequest({ type: 'nope' }, deps)).toEqual({ ok: false, error: 'unknown request' });
    expect(await handleRequest({ type: 'add-url', url: 'ftp://x/y' }, deps)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/http/),
    });
    expect(await handleRequest({ type: 'add-url', url: 'not a url' }, deps)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/is not a URL/),
    });
    expect(await handleRequest({ type: 'job-action', id: 'x', action: 'explode' }, deps)).toMatchObject({ ok: false });
    const bad = await handleRequest({ type: 'set-settings', settings: { connectionsPerServer: 9 } }, deps);
    expect(bad).toMatchObject({ ok: false, errors: [{ field: 'connectionsPerServer' }] });
    expect(browser.stored.has('settings')).toBe(false); // nothing stored on bad input
    expect(await handleRequest({ type: 'import-settings', json: '{oops' }, deps)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/JSON/),
    });
    const good = await handleRequest({ type: 'import-settings', json: '{"maxConcurrentJobs": 5}' }, deps);
    expect(good).toMatchObject({
      ok: true,
      value: { settings: { maxConcurrentJobs: 5, connectionsPerServer: DEFAULT_SETTINGS.connectionsPerServer } },
    });
  });

  test('answers settings requests while the store is still opening; job requests wait for it', async () => {
    const browser = new FakeBrowser();
    let opened: (manager: JobManager) => void = () => {};
    const deps = {
      api: browser,
      manager: new Promise<JobManager>((resolve) => (opened = resolve)),
      settings: new SettingsStore(browser),
      notices: new UiNotices(browser, () => {}),
      mirrorsFor: () => [],
    };
    const saved = await handleRequest({ type: 'set-settings', settings: { ...DEFAULT_SETTINGS, maxConcurrentJobs: 4 } }, deps);
    expect(saved).toMatchObject({ ok: true, value: { settings: { maxConcurrentJobs: 4 } } });
    expect(await handleRequest({ type: 'get-settings' }, deps)).toMatchObject({ ok: true, value: { settings: { maxConcurrentJobs: 4 } } });

    let listed = false;
    const list = handleRequest({ type: 'list-jobs' }, deps).then((reply) => ((listed = true), reply));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(listed).toBe(false);
    opened(harness({ store: await store(), browser }).manager);
    expect(await list).toMatchObject({ ok: true, value: { jobs: [] } });
  });
});

describe('JobManager: the queue keeps the order the user gave', () => {
  /** Queued jobs' ids in the order they start, as their views say. */
  const queueOf = (h: Harness) =>
    [...h.views.values()]
      .filter((v) => v.state === 'queued' && v.queuePlace)
      .sort((a, b) => a.queuePlace!.position - b.queuePlace!.position)
      .map((v) => v.id);
  const running = (h: Harness) => [...h.views.values()].filter((v) => v.state === 'running').map((v) => v.id);

  async function five(options: { undoMs?: number; browser?: FakeBrowser; store?: IdbStore } = {}) {
    // One slow server: nothing finishes while the test looks.
    const slow = await server(8 * MiB, 256 * 1024);
    const h = harness({
      store: options.store ?? (await store()),
      browser: options.browser,
      settings: { maxConcurrentJobs: 2 },
      undoMs: options.undoMs,
    });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await h.manager.add({ url: `${slow.url}?n=${i}` })).id);
    await until('two running', () => running(h).length === 2);
    return { h, ids };
  }

  test('first in, first out; a queued job paused and resumed, or cancelled and undone, waits at its place again', async () => {
    const { h, ids } = await five({ undoMs: 5_000 });
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    expect(running(h).sort()).toEqual([a, b].sort());
    expect(queueOf(h)).toEqual([c, d, e]);
    expect(h.manager.get(d)?.queuePlace).toEqual({ position: 2, of: 3 });

    await h.manager.act(d, 'pause');
    expect(queueOf(h)).toEqual([c, e]);
    await h.manager.act(d, 'resume');
    expect(queueOf(h)).toEqual([c, d, e]);

    await h.manager.act(c, 'cancel');
    expect(queueOf(h)).toEqual([d, e]);
    await h.manager.act(c, 'undo');
    expect(queueOf(h)).toEqual([c, d, e]);
    expect(h.manager.get(c)?.queuePlace).toEqual({ position: 1, of: 3 });

    // A running job paused: the queue's front takes its slot; resumed, it waits first (it was given first).
    await h.manager.act(a, 'pause');
    await until('the front started', () => running(h).includes(c));
    await h.manager.act(a, 'resume');
    expect(queueOf(h)).toEqual([a, d, e]);
    await h.manager.actAll('pause');
  });

  test('Cancel all and its one Undo: every job as it was, the running ones running, the queued at their places', async () => {
    const { h, ids } = await five({ undoMs: 5_000 });
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    await h.manager.moveInQueue(e, 'up');
    expect(queueOf(h)).toEqual([c, e, d]);

    expect(await h.manager.actAll('cancel')).toBe(5);
    const groups = new Set(ids.map((id) => h.views.get(id)?.undoGroup));
    expect(groups.size).toBe(1);
    expect([...groups][0]).toEqual(expect.any(String));
    for (const id of ids) expect(h.views.get(id)).toMatchObject({ undoUntil: expect.any(Number), state: 'paused' });
    expect(running(h)).toEqual([]); // nothing queued jumped into the freed slots

    expect(await h.manager.actAll('undo', ids)).toBe(5);
    await until('the two running again', () => running(h).length === 2);
    expect(running(h).sort()).toEqual([a, b].sort());
    expect(queueOf(h)).toEqual([c, e, d]);
    for (const id of ids) expect([h.views.get(id)?.undoUntil, h.views.get(id)?.undoGroup]).toEqual([undefined, undefined]);
    await h.manager.actAll('pause');
  });

  test('Pause all with ids (the rows a filter shows) pauses only those', async () => {
    const { h, ids } = await five();
    const [a, , c, d] = ids as [string, string, string, string, string];
    expect(await h.manager.actAll('pause', [a, c, 'gone'])).toBe(2);
    await until('both paused', () => h.views.get(a)?.state === 'paused' && h.views.get(c)?.state === 'paused');
    await until('the queue moved up', () => running(h).includes(d));
    expect(ids.filter((id) => h.views.get(id)?.state === 'paused')).toEqual([a, c]);
    await h.manager.actAll('pause');
  });

  test('the order, moves included, survives the worker restarting', async () => {
    const s = await store();
    const browser = new FakeBrowser();
    const { h, ids } = await five({ store: s, browser });
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    await h.manager.moveInQueue(e, 'up');
    await h.manager.moveInQueue(e, 'up');
    expect(queueOf(h)).toEqual([e, c, d]);
    // The worker dies: its transfers stop without any state change of ours.
    await h.manager.actAll('pause');
    for (const id of ids) {
      await browser.storage.set(`job-meta:${id}`, { ...((await browser.storage.get(`job-meta:${id}`)) as object), pausedByUser: false });
    }

    const after = harness({ store: s, browser, settings: { maxConcurrentJobs: 2 } });
    await after.manager.restore();
    await until('two running again', () => running(after).length === 2);
    expect(running(after).sort()).toEqual([a, b].sort());
    expect(queueOf(after)).toEqual([e, c, d]);
    expect(after.manager.get(c)?.queuePlace).toEqual({ position: 2, of: 3 });
    await after.manager.actAll('pause');
  });
});
