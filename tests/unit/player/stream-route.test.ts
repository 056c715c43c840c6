import { describe, expect, it, vi } from 'vitest';
import type { JobView } from '../../../src/messages';
import { PlaybackHub } from '../../../src/background/playback/playback';
import { StreamRoute, streamJobId } from '../../../src/background/playback/stream-route';
import { jobView } from '../pages/fixtures';
import { fakePlaybackJob } from './fake-playback-job';

const size = 1000;
const file = Uint8Array.from({ length: 4 * 1024 * 1024 }, (_, i) => i % 251);

/** A job whose bytes the test stores as it goes, behind the real hub and route. */
function setup(view: Partial<JobView> = {}, length = size) {
  const job = fakePlaybackJob(
    jobView({ id: 'j', size: length, filename: 'clip.webm', contentType: 'application/octet-stream', ...view }),
    [],
    file,
  );
  const hub = new PlaybackHub({ jobs: async () => job.jobs, store: async () => job.store });
  const route = new StreamRoute({ hub, jobs: async () => job.jobs, store: async () => job.store, maxChunk: 100, waitMs: 300 });
  return { route, ...job, store: (start: number, end: number) => job.change('stored', start, end) };
}

const get = (range?: string) => new Request('chrome-extension://x/stream/j', { headers: range ? { Range: range } : {} });

async function readAll(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

describe('the stream route', () => {
  it('answers only stream URLs of its own origin', () => {
    expect(streamJobId('chrome-extension://x/stream/abc-1', 'chrome-extension://x')).toBe('abc-1');
    expect(streamJobId('chrome-extension://x/stream/', 'chrome-extension://x')).toBeUndefined();
    expect(streamJobId('chrome-extension://x/player.html', 'chrome-extension://x')).toBeUndefined();
    expect(streamJobId('https://example.com/stream/abc', 'chrome-extension://x')).toBeUndefined();
  });

  it('answers a range with 206 and the whole requested length, streaming stored bytes as they arrive', async () => {
    const t = setup();
    t.store(0, 300);
    const response = await t.route.answer(get('bytes=200-'), 'j');
    expect(response.status).toBe(206);
    expect(response.headers.get('content-range')).toBe('bytes 200-999/1000');
    expect(response.headers.get('content-length')).toBe('800');
    expect(response.headers.get('content-type')).toBe('video/webm');
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    const body = readAll(response);
    // The rest arrives later, out of order: the body waits for byte 300, then goes on.
    setTimeout(() => t.store(600, 1000), 30);
    setTimeout(() => t.store(300, 600), 80);
    expect(await body).toEqual(file.subarray(200, size));
    // It told the engine where the player needs bytes: the first missing one.
    expect(t.playbacks.map((p) => p[0]?.position)).toContain(300);
    // Waiting ended on the job's events: the store was read when the response opened, not polled.
    expect(t.reads()).toBeLessThanOrEqual(2);
    expect(t.watchers.size).toBe(0);
  });

  it('moves the player to a seek’s position as soon as it is asked, before the element reads, apart from other pages', async () => {
    const t = setup();
    t.store(0, 100);
    const first = await t.route.answer(get('bytes=0-'), 'j', 'tab-1');
    await new Promise((r) => setTimeout(r, 0));
    expect(t.playbacks.at(-1)).toMatchObject([{ position: 100 }]);
    // The seek: a new request from the same page; its position counts at once, the old one's no more.
    const seek = await t.route.answer(get('bytes=700-'), 'j', 'tab-1');
    await new Promise((r) => setTimeout(r, 0));
    expect(t.playbacks.at(-1)).toMatchObject([{ position: 700 }]);
    // Another page playing the same job keeps its own position; the newest comes first.
    await new Promise((r) => setTimeout(r, 5));
    await t.route.answer(get('bytes=400-'), 'j', 'tab-2');
    await new Promise((r) => setTimeout(r, 0));
    expect(t.playbacks.at(-1)?.map((p) => p.position)).toEqual([400, 700]);
    const body = readAll(seek);
    await new Promise((r) => setTimeout(r, 10));
    t.store(700, 1000);
    // Answered on the store's event, within a few turns of the event loop (no polling timer), however loaded the machine.
    const turns = async (n: number) => {
      for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
    };
    expect(await Promise.race([body, turns(10).then(() => 'not yet')])).toEqual(file.subarray(700, size));
    await first.body?.cancel();
  });

  it('does not move the player back when the element asks again at its old position after a seek', async () => {
    // Chrome around a seek (the playback benchmark): it asks for the target, then once more from
    // where it had got to before, and reads both for a while.
    const length = 4 * 1024 * 1024;
    const t = setup({}, length);
    t.store(0, 393_216);
    const playing = await t.route.answer(get('bytes=0-'), 'j', 'tab-1');
    const reader = playing.body!.getReader();
    for (let got = 0; got < 393_216;) got += (await reader.read()).value!.length;
    const seek = await t.route.answer(get('bytes=3145728-'), 'j', 'tab-1');
    const sinceSeek = t.playbacks.length;
    await reader.cancel();
    const again = await t.route.answer(get('bytes=393216-'), 'j', 'tab-1');
    const againReader = again.body!.getReader();
    const stalled = againReader.read();
    const target = readAll(seek);
    await new Promise((r) => setTimeout(r, 20));
    expect(t.playbacks.at(-1)).toMatchObject([{ position: 3_145_728 }]);
    t.store(3_145_728, 3_200_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(t.playbacks.at(-1)).toMatchObject([{ position: 3_200_000 }]);
    expect(t.playbacks.slice(sinceSeek).map((p) => p[0]?.position)).not.toContain(393_216);
    t.store(393_216, length);
    expect((await target).length).toBe(length - 3_145_728);
    expect((await stalled).done).toBe(false);
    await againReader.cancel();
  });

  it('forgets the pages whose reads all stopped a minute ago', async () => {
    const t = setup();
    t.store(0, size);
    const tracked = () => (t.route as unknown as { clients: Map<string, unknown> }).clients.size;
    await readAll(await t.route.answer(get('bytes=0-'), 'j', 'tab-1'));
    await readAll(await t.route.answer(get('bytes=0-'), 'j', 'tab-2'));
    expect(tracked()).toBe(2);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61_000);
      await readAll(await t.route.answer(get('bytes=500-'), 'j', 'tab-3'));
      expect(tracked()).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers no Range with 200 and the whole file; beyond the end with 416', async () => {
    const t = setup();
    t.store(0, size);
    const whole = await t.route.answer(get(), 'j');
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe('1000');
    expect(await readAll(whole)).toEqual(file.subarray(0, size));
    const beyond = await t.route.answer(get('bytes=1000-'), 'j');
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe('bytes */1000');
    const suffix = await t.route.answer(get('bytes=-10'), 'j');
    expect(await readAll(suffix)).toEqual(file.subarray(990, size));
  });

  it('fails the body when the bytes do not come within the wait, or the job is gone', async () => {
    const t = setup();
    t.store(0, 100);
    const stalled = await t.route.answer(get('bytes=0-'), 'j');
    await expect(readAll(stalled)).rejects.toThrow();
    t.setView(undefined);
    expect((await t.route.answer(get('bytes=0-'), 'j')).status).toBe(404);
  });
});
