import { describe, expect, it } from 'vitest';
import { CongestionWindow, INITIAL_WINDOW_BYTES, retransmissionTimeoutMs } from '../support/congestion-window';

/** Sends as fast as the window lets from `from` for `ms`, in 1 ms steps; returns the bytes per round trip. */
function sendFlat(window: CongestionWindow, from: number, ms: number, rttMs: number, cap = Infinity): number[] {
  const rounds: number[] = [];
  for (let now = from; now < from + ms; now++) {
    const room = window.room(now);
    // A rate cap: at most `cap` bytes per round trip, spread evenly.
    const n = Math.min(room.bytes, cap === Infinity ? room.bytes : cap / rttMs);
    if (n > 0) window.sent(n, now);
    const round = Math.floor((now - from) / rttMs);
    rounds[round] = (rounds[round] ?? 0) + n;
  }
  return rounds;
}

/**
 * Warms a window over four round trips, then checks that it keeps its window after `keptMs` without
 * sending and starts again from 10 segments 1 ms later.
 */
function expectRestartAfter(rttMs: number, keptMs: number, idleRestartMs?: number) {
  const window = new CongestionWindow({ rttMs, slowStart: true, maxWindow: Infinity, idleRestartMs });
  sendFlat(window, 0, 4 * rttMs, rttMs);
  // The last bytes went when the fourth round trip opened.
  const lastSentAt = 3 * rttMs;
  expect(window.bytes).toBe(8 * INITIAL_WINDOW_BYTES);
  window.restartIfIdle(lastSentAt + keptMs);
  expect(window.bytes).toBe(8 * INITIAL_WINDOW_BYTES);
  window.restartIfIdle(lastSentAt + keptMs + 1);
  expect(window.bytes).toBe(INITIAL_WINDOW_BYTES);
  return { window, restartedAt: lastSentAt + keptMs + 1 };
}

describe('CongestionWindow', () => {
  it('sends 10 segments in the first round trip and doubles each round trip that used its window', () => {
    const window = new CongestionWindow({ rttMs: 10, slowStart: true, maxWindow: Infinity, idleRestartMs: 200 });
    expect(sendFlat(window, 0, 50, 10)).toEqual([1, 2, 4, 8, 16].map((k) => k * INITIAL_WINDOW_BYTES));
  });

  it('does not grow a window that a rate cap leaves unused', () => {
    const window = new CongestionWindow({ rttMs: 10, slowStart: true, maxWindow: Infinity, idleRestartMs: 200 });
    // 20 000 B per round trip: the window grows once (14 600 → 29 200), then is never full again.
    sendFlat(window, 0, 100, 10, 20_000);
    expect(window.bytes).toBe(2 * INITIAL_WINDOW_BYTES);
  });

  it('stops at maxWindow; without slow start it is maxWindow from the first round trip', () => {
    const capped = new CongestionWindow({ rttMs: 10, slowStart: true, maxWindow: 50_000, idleRestartMs: 200 });
    expect(sendFlat(capped, 0, 60, 10)).toEqual([14_600, 29_200, 50_000, 50_000, 50_000, 50_000]);
    const flat = new CongestionWindow({ rttMs: 10, slowStart: false, maxWindow: 50_000, idleRestartMs: 200 });
    expect(sendFlat(flat, 0, 30, 10)).toEqual([50_000, 50_000, 50_000]);
  });

  it('starts again from 10 segments only after idleRestartMs without sending', () => {
    const { window, restartedAt } = expectRestartAfter(10, 200, 200);
    expect(window.room(restartedAt)).toEqual({ bytes: INITIAL_WINDOW_BYTES, waitMs: 0 });
  });

  it('by default restarts after the retransmission timeout, about the round trip plus 200 ms, as Linux does', () => {
    expect(retransmissionTimeoutMs(10)).toBe(210);
    expect(retransmissionTimeoutMs(300)).toBe(500);
    // A 300 ms connection asked for its next block a round trip after its last bytes keeps its window.
    expectRestartAfter(300, 500);
    expectRestartAfter(10, 210);
  });

  it('needs a round trip', () => {
    expect(() => new CongestionWindow({ rttMs: 0, slowStart: true, maxWindow: Infinity, idleRestartMs: 200 })).toThrow(/round trip/);
  });
});
