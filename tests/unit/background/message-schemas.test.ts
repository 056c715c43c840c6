import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BrowserApi, UiPort } from '../../../src/background/browser-api';
import type { JobManager } from '../../../src/background/jobs/job-manager';
import { PlaybackHub, type PlaybackJobs } from '../../../src/background/playback/playback';
import { OFFSCREEN_DOCUMENT_URL } from '../../../src/offscreen/protocol';
import type { SettingsStore } from '../../../src/background/settings-store';
import type { Bypass } from '../../../src/background/takeover/bypass';
import type { Aria2Link } from '../../../src/background/aria2/aria2-link';
import { handleRequest, type HandlerDeps } from '../../../src/background/ui/message-handler';
import type { UiNotices } from '../../../src/background/ui/ui-notices';
import type { Playback } from '../../../src/engine';
import { PLAYER_PORT, type JobView, type RequestType } from '../../../src/messages';
import { DEFAULT_SETTINGS } from '../../../src/settings/schema';
import { jobView } from '../pages/fixtures';

/** Every call the fakes were asked for, as [name, ...arguments]. */
type Calls = unknown[][];

/** The handler's dependencies, each recording its calls and answering as little as the handler needs. */
function fakeDeps(calls: Calls): HandlerDeps {
  const job = jobView({ id: 'j1', state: 'paused', savedDownloadId: 7 });
  const record =
    <T>(name: string, value: T) =>
    (...args: unknown[]) => {
      calls.push([name, ...args]);
      return Promise.resolve(value);
    };
  const manager = {
    restore: () => Promise.resolve(),
    views: () => [job],
    get: (id: string) => (id === 'j1' ? job : undefined),
    bytes: { findPlayable: () => undefined, streamTimeline: () => undefined },
    handoffFacts: (id: string) => (id === 'j1' ? { url: job.url } : undefined),
    act: record('act', job),
    actAll: record('actAll', 1),
    clearFinished: record('clearFinished', 0),
    add: record('add', job),
    saveAs: record('saveAs', job),
    relink: record('relink', { job }),
    moveInQueue: record('moveInQueue', job),
    setSpeedLimit: record('setSpeedLimit', job),
    forget: record('forget', undefined),
  };
  const api = {
    downloads: { open: record('open', undefined), show: record('show', undefined), search: record('search', { filename: '/d/big.iso' }) },
  };
  return {
    api: api as unknown as BrowserApi,
    manager: manager as unknown as JobManager,
    settings: {
      load: record('load', DEFAULT_SETTINGS),
      save: record('save', DEFAULT_SETTINGS),
      import: record('import', DEFAULT_SETTINGS),
      export: record('export', '{}'),
    } as unknown as SettingsStore,
    notices: { all: record('notices', []), clear: record('clear', undefined) } as unknown as UiNotices,
    mirrorsFor: () => [],
    testRule: record('testRule', { original: { url: '', ok: true, message: '' }, mirrors: [] }),
    bypass: {
      setNext: record('setNext', undefined),
      leaveSite: record('leaveSite', undefined),
      nextArmed: () => Promise.resolve(false),
      browserDownload: record('browserDownload', undefined),
    } as unknown as Bypass,
    aria2: {
      check: record('check', { version: '1.37.0' }),
      send: record('send', 'g1'),
      act: record('act-aria2', undefined),
    } as unknown as Aria2Link,
    watcher: { takeOver: record('takeOver', 'taken') },
    streams: {
      download: record('downloadStream', {} as JobView),
      record: record('recordStream', undefined),
      stopRecording: (...args: unknown[]) => void calls.push(['stopRecording', ...args]),
    },
    playback: { expectPlayer: record('expectPlayer', undefined) },
  };
}

const RULE = { pattern: 'example.com/pub/', mirrors: ['https://m.example.org/pub/'], passQuery: false, sendCookies: false };
const NOT_A_URL = /is not a URL/;
const NOT_HTTP = /Only http:\/\/ and https:\/\//;

interface Case {
  /** A valid request and the calls it leads to (in the normal form the schema gives its fields). */
  valid: Record<string, unknown>;
  calls?: Calls;
  /** Malformed requests and what the reply's `error` says. */
  malformed: [Record<string, unknown>, string | RegExp][];
}

/** One row per request type: a valid request and malformed ones, through the real handler. */
const CASES: Record<RequestType, Case> = {
  'aria2-test': {
    valid: { url: 'http://127.0.0.1:6800/jsonrpc', secret: 's', plainConfirmed: false },
    calls: [['check', 'http://127.0.0.1:6800/jsonrpc', 's', false]],
    malformed: [[{ url: 'http://127.0.0.1:6800/jsonrpc', secret: 's' }, /boolean/]],
  },
  'aria2-send': {
    valid: { id: 'j1' },
    calls: [
      ['send', { url: jobView().url }],
      ['forget', 'j1'],
    ],
    malformed: [[{}, 'missing id']],
  },
  'aria2-action': {
    valid: { gid: 'g1', action: 'pause' },
    calls: [['act-aria2', 'g1', 'pause']],
    malformed: [
      [{ gid: 'g1', action: 'explode' }, 'unknown action explode'],
      [{ gid: '', action: 'pause' }, 'missing gid'],
    ],
  },
  'list-jobs': { valid: {}, calls: [['notices']], malformed: [] },
  'job-action': {
    valid: { id: 'j1', action: 'resume' },
    calls: [['act', 'j1', 'resume']],
    malformed: [
      [{ id: 'j1', action: 'explode' }, 'unknown action explode'],
      [{ action: 'pause' }, 'missing id'],
      [{ id: 5, action: 'pause' }, 'missing id'],
    ],
  },
  'all-action': {
    valid: { action: 'pause', ids: ['a', 'b'] },
    calls: [['actAll', 'pause', ['a', 'b']]],
    malformed: [
      [{}, 'unknown action undefined'],
      [{ action: 'undo', ids: 'a' }, 'ids: a list of ids'],
    ],
  },
  'clear-finished': { valid: {}, calls: [['clearFinished']], malformed: [] },
  'dismiss-notices': { valid: {}, calls: [['clear']], malformed: [] },
  'add-url': {
    valid: { url: ' https://example.com/a b.iso ', filename: '  x.iso ', saveAs: true },
    calls: [['add', { url: 'https://example.com/a%20b.iso', filename: 'x.iso', referrer: undefined, saveAs: true, mirrors: [] }]],
    malformed: [
      [{ url: 'not a url' }, NOT_A_URL],
      [{ url: 'ftp://example.com/x' }, NOT_HTTP],
      [{}, NOT_A_URL],
      [{ url: 'https://example.com/x', saveAs: 'yes' }, /boolean/],
    ],
  },
  'open-file': { valid: { id: 'j1' }, calls: [['open', 7]], malformed: [[{ id: '' }, 'missing id']] },
  'show-in-folder': { valid: { id: 'j1' }, calls: [['show', 7]], malformed: [[{}, 'missing id']] },
  'saved-path': { valid: { id: 'j1' }, calls: [['search', 7]], malformed: [[{ id: null }, 'missing id']] },
  'save-as': { valid: { id: 'j1' }, calls: [['saveAs', 'j1']], malformed: [[{}, 'missing id']] },
  'get-settings': { valid: {}, calls: [['load']], malformed: [] },
  'set-settings': { valid: { settings: { maxConcurrentJobs: 4 } }, calls: [['save', { maxConcurrentJobs: 4 }]], malformed: [] },
  'import-settings': { valid: { json: '{}' }, calls: [['import', '{}']], malformed: [[{ json: '' }, 'missing json']] },
  'test-mirror-rule': {
    valid: { rule: RULE, sampleUrl: 'https://example.com/pub/f.iso' },
    calls: [['testRule', RULE, 'https://example.com/pub/f.iso', undefined, undefined]],
    malformed: [
      [{ rule: { pattern: '', mirrors: [] }, sampleUrl: 'https://example.com/pub/f.iso' }, /The rule is not valid/],
      [{ rule: RULE, sampleUrl: 'example' }, NOT_A_URL],
    ],
  },
  play: {
    valid: { url: 'https://example.com/v.mp4', referrer: 'https://example.com/' },
    calls: [
      ['add', { url: 'https://example.com/v.mp4', filename: undefined, referrer: 'https://example.com/', saveAs: false, mirrors: [] }],
      // A new job its player will read from the start.
      ['expectPlayer', 'j1', undefined],
    ],
    malformed: [
      [{}, NOT_A_URL],
      [{ id: '' }, 'missing id'],
      [{ url: 'file:///etc/passwd' }, NOT_HTTP],
    ],
  },
  bypass: {
    valid: { next: true, site: ' Example.COM:8080 ' },
    calls: [
      ['setNext', true],
      ['leaveSite', 'example.com'],
    ],
    malformed: [
      [{ site: 'not a site!' }, /“not a site!” is not a host name/],
      [{ next: 'yes' }, /boolean/],
    ],
  },
  relink: {
    valid: { id: 'j1', url: 'https://example.com/new.iso' },
    calls: [['relink', 'j1', 'https://example.com/new.iso', false]],
    malformed: [
      [{ id: 'j1', url: 'nope' }, NOT_A_URL],
      [{ url: 'https://example.com/new.iso' }, 'missing id'],
    ],
  },
  'queue-move': {
    valid: { id: 'j1', direction: 'up' },
    calls: [['moveInQueue', 'j1', 'up']],
    malformed: [[{ id: 'j1', direction: 'sideways' }, 'unknown direction sideways']],
  },
  'job-speed-limit': {
    valid: { id: 'j1', bytesPerSecond: null },
    calls: [['setSpeedLimit', 'j1', null]],
    malformed: [
      [{ id: 'j1', bytesPerSecond: 0 }, 'a speed limit is a number above 0, or none'],
      [{ id: 'j1', bytesPerSecond: Number.POSITIVE_INFINITY }, 'a speed limit is a number above 0, or none'],
      [{ id: 'j1', bytesPerSecond: '100' }, 'a speed limit is a number above 0, or none'],
      [{ id: 'j1' }, 'a speed limit is a number above 0, or none'],
    ],
  },
  'hand-to-browser': {
    valid: { id: 'j1' },
    calls: [
      ['browserDownload', expect.anything(), jobView().url],
      ['forget', 'j1'],
    ],
    malformed: [[{}, 'missing id']],
  },
  'take-over-watched': {
    valid: { downloadId: 7 },
    calls: [['takeOver', 7]],
    malformed: [
      [{}, 'missing downloadId'],
      [{ downloadId: '7' }, 'missing downloadId'],
      [{ downloadId: 1.5 }, 'missing downloadId'],
    ],
  },
  'download-stream': {
    valid: { url: ' https://video.example/show/master.m3u8 ', variant: 1 },
    calls: [['downloadStream', 'https://video.example/show/master.m3u8', 1]],
    malformed: [
      [{}, NOT_A_URL],
      [{ url: 'ftp://video.example/a.m3u8' }, NOT_HTTP],
      [{ url: 'https://video.example/a.m3u8', variant: -1 }, 'unknown variant'],
      [{ url: 'https://video.example/a.m3u8', variant: '1' }, 'unknown variant'],
    ],
  },
  'record-stream': {
    valid: { url: 'https://video.example/live/index.m3u8' },
    calls: [['recordStream', 'https://video.example/live/index.m3u8']],
    malformed: [
      [{}, NOT_A_URL],
      [{ url: 'file:///live.m3u8' }, NOT_HTTP],
    ],
  },
  'stop-recording': {
    valid: { url: 'https://video.example/live/index.m3u8' },
    calls: [['stopRecording', 'https://video.example/live/index.m3u8']],
    malformed: [[{}, NOT_A_URL]],
  },
};

describe('every request is parsed with its schema where the background receives it', () => {
  for (const [type, { valid, calls, malformed }] of Object.entries(CASES)) {
    it(`${type}: a valid request is answered ok with its fields in normal form; a malformed one ok:false`, async () => {
      const made: Calls = [];
      const reply = await handleRequest({ type, ...valid }, fakeDeps(made));
      expect(reply).toMatchObject({ ok: true });
      expect(made).toEqual(calls ?? []);
      for (const [fields, error] of malformed) {
        const refused: Calls = [];
        const answer = await handleRequest({ type, ...fields }, fakeDeps(refused));
        expect(answer, JSON.stringify(fields)).toEqual({
          ok: false,
          error: typeof error === 'string' ? error : expect.stringMatching(error),
        });
        expect(refused, 'nothing is done on a malformed request').toEqual([]);
      }
    });
  }

  it('answers what is not a request at all with `unknown request`, never a crash', async () => {
    for (const message of [undefined, null, 42, 'list-jobs', [], {}, { type: 'nope' }, { type: 7 }]) {
      expect(await handleRequest(message, fakeDeps([]))).toEqual({ ok: false, error: 'unknown request' });
    }
  });

  it('a speed limit above 0 reaches the manager as given', async () => {
    const made: Calls = [];
    expect(await handleRequest({ type: 'job-speed-limit', id: 'j1', bytesPerSecond: 51_200 }, fakeDeps(made))).toMatchObject({ ok: true });
    expect(made).toEqual([['setSpeedLimit', 'j1', 51_200]]);
  });
});

/** A player port the test posts on as a page would. */
function playerPort() {
  const listeners: ((m: unknown) => void)[] = [];
  const port: UiPort = {
    name: PLAYER_PORT,
    postMessage: () => {},
    onMessage: { addListener: (l) => void listeners.push(l), removeListener: () => {} },
    onDisconnect: { addListener: () => {}, removeListener: () => {} },
  };
  return { port, send: (m: unknown) => listeners.forEach((l) => l(m)) };
}

describe('the player port parses what a page posts with its schema', () => {
  function hub() {
    const held: string[] = [];
    const playbacks: (readonly Playback[])[] = [];
    const jobs: PlaybackJobs = {
      get: (id) => (id === 'j1' ? jobView({ id: 'j1', size: 10_000_000 }) : undefined),
      setPlayback: (_id, p) => void playbacks.push(p),
      holdBytes: (id) => (held.push(id), () => {}),
      bytesFreed: () => false,
      watchBytes: () => () => {},
    };
    const playback = new PlaybackHub({ jobs: async () => jobs, store: async () => ({ storedRanges: async () => [] }) });
    return { playback, held, playbacks };
  }
  const settle = () => new Promise((r) => setTimeout(r, 5));

  it('attaches on a valid attach and moves on a valid position', async () => {
    const h = hub();
    const p = playerPort();
    h.playback.connect(p.port);
    p.send({ type: 'attach', id: 'j1' });
    await settle();
    expect(h.held).toEqual(['j1']);
    p.send({ type: 'position', position: 1_000, durationSeconds: 100 });
    await settle();
    expect(h.playbacks.at(-1)).toEqual([{ position: 1_000, aheadBytes: 1_000_000, bytesPerSecond: 100_000 }]);
  });

  it('ignores malformed messages without a crash', async () => {
    const h = hub();
    const p = playerPort();
    h.playback.connect(p.port);
    for (const message of [null, 'attach', { type: 'attach' }, { type: 'attach', id: 3 }, { type: 'attach', id: '' }, { type: 'play' }]) {
      expect(() => p.send(message)).not.toThrow();
    }
    await settle();
    expect(h.held).toEqual([]);
    p.send({ type: 'attach', id: 'j1' });
    await settle();
    for (const message of [
      { type: 'position', position: -1 },
      { type: 'position', position: 'end' },
      { type: 'position', position: Number.NaN },
      { type: 'position', position: 5, durationSeconds: 0 },
    ]) {
      expect(() => p.send(message)).not.toThrow();
    }
    await settle();
    expect(h.playbacks).toEqual([]);
  });
});

describe("the offscreen document parses the background's messages with their schema", () => {
  type Listener = (message: unknown, sender: unknown, sendResponse: (reply: unknown) => void) => boolean;
  let listener: Listener;
  /** Loads the offscreen page at `url` afresh; the listener it registered, if any. */
  async function openAt(url: string): Promise<Listener | undefined> {
    let registered: Listener | undefined;
    vi.stubGlobal('chrome', { runtime: { onMessage: { addListener: (l: Listener) => (registered = l) } } });
    vi.stubGlobal('location', new URL(url, 'chrome-extension://stitch/'));
    vi.resetModules();
    await import('../../../src/offscreen/main');
    return registered;
  }
  beforeAll(async () => {
    listener = (await openAt(OFFSCREEN_DOCUMENT_URL))!;
  });
  afterEach(() => vi.restoreAllMocks());

  it('answers only as the offscreen document: the same page in a tab (tests open one) leaves the requests alone', async () => {
    expect(listener).toBeTypeOf('function');
    expect(await openAt('offscreen/offscreen.html')).toBeUndefined();
  });

  /** What the offscreen document answers, and whether it answered at all (false: not its message). */
  async function send(message: unknown): Promise<{ handled: boolean; reply?: unknown }> {
    let reply: unknown;
    const answered = new Promise<void>((resolve) => {
      const handled = listener(message, {}, (r) => ((reply = r), resolve()));
      if (!handled && reply === undefined) resolve();
    });
    await answered;
    return { handled: reply !== undefined, reply };
  }

  it('answers a valid request', async () => {
    const revoke = vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {});
    expect(await send({ target: 'offscreen', type: 'revoke-blob-url', url: 'blob:x' })).toEqual({ handled: true, reply: { ok: true } });
    expect(revoke).toHaveBeenCalledWith('blob:x');
    expect(await send({ target: 'offscreen', type: 'close-frame', url: 'https://x/' })).toEqual({ handled: true, reply: { ok: true } });
  });

  it('answers a malformed request ok:false, and leaves messages for the background alone', async () => {
    const refused = (error: string | RegExp) => ({ handled: true, reply: { ok: false, error: expect.stringMatching(error) } });
    expect(await send({ target: 'offscreen', type: 'revoke-blob-url' })).toEqual(refused(/"url"/));
    expect(await send({ target: 'offscreen', type: 'open-frame', url: '' })).toEqual(refused(/length/));
    expect(await send({ target: 'offscreen', type: 'make-blob-url', jobId: 'j', size: -1 })).toEqual(refused(/>=0/));
    expect(await send({ target: 'offscreen', type: 'make-blob-url', size: 1 })).toEqual(refused(/"jobId"/));
    expect(await send({ target: 'offscreen', type: 'explode' })).toEqual(refused('unknown offscreen request'));
    expect(await send({ type: 'list-jobs' })).toEqual({ handled: false });
    expect(await send(null)).toEqual({ handled: false });
  });
});
