import { describe, expect, it } from 'vitest';
import type { UiPort } from '../../../src/background/browser-api';
import { aheadBytes, PlaybackHub, type PlaybackJobs } from '../../../src/background/playback';
import type { Playback } from '../../../src/engine';
import { PLAYER_PORT, type JobView, type PlayerPortMessage } from '../../../src/messages';
import type { ByteRange } from '../../../src/engine/ranges';
import { jobView } from '../pages/fixtures';

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
  return { port, posted, send: (m: unknown) => listeners.message.forEach((l) => l(m)), disconnect: () => listeners.disconnect.forEach((l) => l()) };
}

function setup() {
  let stored: ByteRange[] = [{ start: 0, end: 100 }];
  const calls: string[] = [];
  const playbacks: (Playback | undefined)[] = [];
  let view: JobView = jobView({ id: 'j', size: 40_000_000 });
  const jobs: PlaybackJobs = {
    get: (id) => (id === 'j' ? view : undefined),
    setPlayback: (_id, playback) => void playbacks.push(playback),
    holdBytes: (id) => {
      calls.push(`hold ${id}`);
      return () => void calls.push(`release ${id}`);
    },
    bytesFreed: () => false,
  };
  const hub = new PlaybackHub({ jobs: async () => jobs, store: async () => ({ storedRanges: async () => stored }), pollMs: 10, idleMs: 50 });
  return { hub, calls, playbacks, setStored: (r: ByteRange[]) => (stored = r), setView: (v: JobView) => (view = v) };
}

/** Lets time pass where the test checks that nothing happens (there is no event to wait for). */
const quietFor = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the playback hub', () => {
  it('keeps the bytes while a player is attached and tells it what is stored as it grows', async () => {
    const t = setup();
    const p = playerPort();
    t.hub.connect(p.port);
    p.send({ type: 'attach', id: 'j' });
    await expect.poll(() => p.posted.at(-1)).toMatchObject({ type: 'player-state', job: { id: 'j' }, stored: [{ start: 0, end: 100 }], bytesFreed: false });
    expect(t.calls).toEqual(['hold j']);
    t.setStored([{ start: 0, end: 500 }]);
    await expect.poll(() => p.posted.at(-1)?.stored).toEqual([{ start: 0, end: 500 }]);
    const count = p.posted.length;
    await quietFor(40); // several polls with nothing new: nothing posted
    expect(p.posted.length).toBe(count);
    t.setView(jobView({ id: 'j', size: 40_000_000, state: 'paused', pausedByUser: true }));
    t.hub.jobChanged(jobView({ id: 'j' }));
    await expect.poll(() => p.posted.at(-1)?.job?.state).toBe('paused');
    p.disconnect();
    expect(t.calls).toEqual(['hold j', 'release j']);
  });

  it('sets the job’s playback window from the position and the media’s bitrate, and drops it when idle', async () => {
    const t = setup();
    const p = playerPort();
    t.hub.connect(p.port);
    p.send({ type: 'attach', id: 'j' });
    p.send({ type: 'position', durationSeconds: 40 });
    p.send({ type: 'position', position: 12_345 });
    // 40 MB over 40 s: 1 MB/s, 10 s ahead.
    await expect.poll(() => t.playbacks.at(-1)).toEqual({ position: 12_345, aheadBytes: 10_000_000 });
    p.disconnect();
    await expect.poll(() => t.playbacks.at(-1)).toBeUndefined();
  });

  it('resolves a wait for a byte once it is stored, or false after the timeout', async () => {
    const t = setup();
    expect(await t.hub.waitForByte('j', 50, 100)).toBe(true);
    const waiting = t.hub.waitForByte('j', 300, 1000);
    setTimeout(() => t.setStored([{ start: 0, end: 400 }]), 20);
    expect(await waiting).toBe(true);
    expect(await t.hub.waitForByte('j', 900, 30)).toBe(false);
  });

  it('sizes the window between bounds, 2 MiB when the bitrate is unknown', () => {
    expect(aheadBytes(undefined, 60)).toBe(2 * 1024 * 1024);
    expect(aheadBytes(1_000_000, undefined)).toBe(2 * 1024 * 1024);
    expect(aheadBytes(1_000_000, 100)).toBe(512 * 1024);
    expect(aheadBytes(1e12, 10)).toBe(32 * 1024 * 1024);
  });
});
