import { describe, expect, it } from 'vitest';
import type { UiPort } from '../../../src/background/browser-api';
import { aheadBytes, playbackAt, PlaybackHub } from '../../../src/background/playback/playback';
import type { Playback } from '../../../src/engine';
import { PLAYER_PORT, type PlayerPortMessage } from '../../../src/messages';
import { jobView } from '../pages/fixtures';
import { fakePlaybackJob } from './fake-playback-job';

/** A player port the test drives: it posts as the page would and reads what the hub posts. */
function playerPort() {
  const listeners = { message: [] as ((m: unknown) => void)[], disconnect: [] as (() => void)[] };
  const posted: PlayerPortMessage[] = [];
  const port: UiPort = {
    name: PLAYER_PORT,
    postMessage: (m) => void posted.push(structuredClone(m) as PlayerPortMessage),
    onMessage: { addListener: (l) => void listeners.message.push(l), removeListener: () => {} },
    onDisconnect: { addListener: (l) => void listeners.disconnect.push(l), removeListener: () => {} },
  };
  return {
    port,
    posted,
    send: (m: unknown) => listeners.message.forEach((l) => l(m)),
    disconnect: () => listeners.disconnect.forEach((l) => l()),
  };
}

function setup() {
  const job = fakePlaybackJob(jobView({ id: 'j', size: 40_000_000 }), [{ start: 0, end: 100 }]);
  const hub = new PlaybackHub({ jobs: async () => job.jobs, store: async () => job.store, idleMs: 50 });
  return { hub, ...job };
}

const settle = (ms = 20) => new Promise((r) => setTimeout(r, ms));
const positions = (cursors: readonly Playback[] | undefined) => cursors?.map((c) => c.position);

describe('the playback hub', () => {
  it('keeps the bytes while a player is attached and forwards every change of the stored bytes, reading the store once', async () => {
    const t = setup();
    const p = playerPort();
    t.hub.connect(p.port);
    p.send({ type: 'attach', id: 'j' });
    await settle();
    expect(t.calls).toEqual(['hold j']);
    expect(p.posted.at(-1)).toMatchObject({ type: 'player-state', job: { id: 'j' }, stored: [{ start: 0, end: 100 }], bytesFreed: false });
    t.change('stored', 100, 500);
    t.change('stored', 800, 900);
    await settle(1);
    expect(p.posted.at(-1)?.stored).toEqual([
      { start: 0, end: 500 },
      { start: 800, end: 900 },
    ]);
    t.change('discarded', 200, 300);
    await settle(1);
    expect(p.posted.at(-1)?.stored).toEqual([
      { start: 0, end: 200 },
      { start: 300, end: 500 },
      { start: 800, end: 900 },
    ]);
    const count = p.posted.length;
    await settle(60);
    expect(p.posted.length).toBe(count); // nothing new: nothing posted
    expect(t.reads()).toBe(1); // events, not polls
    t.setView(jobView({ id: 'j', size: 40_000_000, state: 'paused', pausedByUser: true }));
    t.hub.jobChanged(jobView({ id: 'j' }));
    await settle();
    expect(p.posted.at(-1)?.job?.state).toBe('paused');
    p.disconnect();
    expect(t.calls).toEqual(['hold j', 'release j']);
    await settle(2);
    expect(t.watchers.size).toBe(0); // nobody listens: the job's events are let go
  });

  it('tells the job where each of its players is, the most recently moved first, and forgets those that leave', async () => {
    const t = setup();
    const a = playerPort();
    const b = playerPort();
    for (const p of [a, b]) {
      t.hub.connect(p.port);
      p.send({ type: 'attach', id: 'j' });
    }
    a.send({ type: 'position', durationSeconds: 40 });
    a.send({ type: 'position', position: 12_345 });
    await settle(2);
    b.send({ type: 'position', position: 30_000_000 });
    await settle(2);
    // 40 MB over 40 s: 1 MB/s, 10 s ahead, and urgent requests sized by that bitrate.
    expect(t.playbacks.at(-1)).toEqual([
      { position: 30_000_000, aheadBytes: 10_000_000, bytesPerSecond: 1_000_000 },
      { position: 12_345, aheadBytes: 10_000_000, bytesPerSecond: 1_000_000 },
    ]);
    await settle(2);
    a.send({ type: 'position', position: 20_000 }); // a seek: this player comes first
    await settle(2);
    expect(positions(t.playbacks.at(-1))).toEqual([20_000, 30_000_000]);
    b.disconnect();
    await settle(2);
    expect(positions(t.playbacks.at(-1))).toEqual([20_000]);
    // A stream client (Chrome) counts until it goes quiet for idleMs.
    await t.hub.need('j', 'stream:tab', 5_000);
    expect(positions(t.playbacks.at(-1))).toEqual([5_000, 20_000]);
    await settle(100);
    expect(positions(t.playbacks.at(-1))).toEqual([20_000]);
    a.disconnect();
    await settle(2);
    expect(t.playbacks.at(-1)).toEqual([]);
  });

  it('gives a job started by Play a player at byte 0 until its own player reads, or until it lapses unused', async () => {
    const t = setup();
    await t.hub.expectPlayer('j', 40);
    // Before the page has read anything: the start, with the bitrate of 40 MB over 40 s.
    expect(t.playbacks.at(-1)).toEqual([{ position: 0, aheadBytes: 10_000_000, bytesPerSecond: 1_000_000 }]);
    // The element's first read (Chrome's stream route) replaces it: one player, where it reads.
    await t.hub.need('j', 'stream:tab', 7_000_000);
    expect(positions(t.playbacks.at(-1))).toEqual([7_000_000]);
    await settle(100);
    expect(t.playbacks.at(-1)).toEqual([]);
    // A page that never reads: the expected player lapses as a quiet stream client does.
    await t.hub.expectPlayer('j', undefined);
    expect(positions(t.playbacks.at(-1))).toEqual([0]);
    await settle(100);
    expect(t.playbacks.at(-1)).toEqual([]);
  });

  it('wakes a waiter at the next stored range or change of the job, and not after the timeout or an abort', async () => {
    const t = setup();
    // While a response streams the job, its ranges come from the events.
    const unfollow = t.hub.follow('j');
    expect(await t.hub.storedRanges('j')).toEqual([{ start: 0, end: 100 }]);
    const waiting = t.hub.nextChange('j', 1000);
    setTimeout(() => t.change('stored', 100, 400), 20);
    const t0 = Date.now();
    expect(await waiting).toBe(true);
    expect(Date.now() - t0).toBeLessThan(200);
    expect(await t.hub.storedRanges('j')).toEqual([{ start: 0, end: 400 }]);
    const viewChange = t.hub.nextChange('j', 1000);
    setTimeout(() => t.hub.jobChanged(jobView({ id: 'j' })), 10);
    expect(await viewChange).toBe(true);
    expect(await t.hub.nextChange('j', 30)).toBe(false);
    const abort = new AbortController();
    const aborted = t.hub.nextChange('j', 1000, abort.signal);
    abort.abort();
    expect(await aborted).toBe(false);
    expect(t.reads()).toBe(1);
    unfollow();
    expect(t.watchers.size).toBe(0);
  });

  it('sizes the window between bounds, 2 MiB when the bitrate is unknown', () => {
    expect(aheadBytes(undefined, 60)).toBe(2 * 1024 * 1024);
    expect(aheadBytes(1_000_000, undefined)).toBe(2 * 1024 * 1024);
    expect(aheadBytes(1_000_000, 100)).toBe(512 * 1024);
    expect(aheadBytes(1e12, 10)).toBe(32 * 1024 * 1024);
  });

  it('reads a new job from its start until its player says where it is: 10 s of media once the bitrate is known', () => {
    expect(playbackAt(0, undefined, undefined)).toEqual({ position: 0, aheadBytes: 2 * 1024 * 1024 });
    expect(playbackAt(0, 9_240_388, 120)).toEqual({ position: 0, aheadBytes: 770_032, bytesPerSecond: 9_240_388 / 120 });
  });
});
