import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PortMessage } from '../../../src/messages';
import { openLivePort, type LiveStatus, type PortLike } from '../../../src/popup/live-port';

/** A port the test drives: post() delivers a message, drop() disconnects it. */
class FakePort implements PortLike {
  private messageListeners: ((m: unknown) => void)[] = [];
  private disconnectListeners: (() => void)[] = [];
  disconnected = false;
  onMessage = { addListener: (l: (m: unknown) => void) => void this.messageListeners.push(l) };
  onDisconnect = { addListener: (l: () => void) => void this.disconnectListeners.push(l) };
  disconnect() {
    this.disconnected = true;
  }
  post(message: unknown) {
    for (const l of this.messageListeners) l(message);
  }
  drop() {
    for (const l of this.disconnectListeners) l();
  }
}

describe('openLivePort', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('passes port messages on and reconnects when the port drops', () => {
    const ports: FakePort[] = [];
    const messages: PortMessage[] = [];
    const statuses: LiveStatus[] = [];
    const stop = openLivePort(
      () => {
        const port = new FakePort();
        ports.push(port);
        return port;
      },
      (m) => messages.push(m),
      (s) => statuses.push(s),
    );
    ports[0]!.post({ type: 'snapshot', jobs: [], notices: [] });
    ports[0]!.post({ nonsense: true });
    expect(messages).toHaveLength(1);
    expect(statuses).toEqual(['connecting', 'live']);

    ports[0]!.drop(); // the worker was stopped
    expect(statuses.at(-1)).toBe('reconnecting');
    vi.advanceTimersByTime(1000);
    expect(ports).toHaveLength(2);
    ports[1]!.post({ type: 'snapshot', jobs: [], notices: [] });
    expect(statuses.at(-1)).toBe('live');

    stop();
    expect(ports[1]!.disconnected).toBe(true);
    ports[1]!.drop();
    vi.advanceTimersByTime(5000);
    expect(ports).toHaveLength(2);
  });

  it('keeps trying while connect throws', () => {
    let calls = 0;
    const port = new FakePort();
    openLivePort(
      () => {
        if (++calls < 3) throw new Error('Extension context invalidated');
        return port;
      },
      () => {},
      () => {},
    );
    vi.advanceTimersByTime(2000);
    expect(calls).toBe(3);
  });
});
