import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PlayerPageMessage, PortMessage } from '../../../src/messages';
import { openReconnectingPort, type LiveStatus, type PortLike } from '../../../src/pages-shared/reconnecting-port';
import { PlayerLink } from '../../../src/player/player-link';

/** A port the test drives: post() delivers a message, drop() disconnects it; what the page posts is in `sent`. */
class FakePort implements PortLike<PlayerPageMessage> {
  private messageListeners: ((m: unknown) => void)[] = [];
  private disconnectListeners: (() => void)[] = [];
  disconnected = false;
  sent: PlayerPageMessage[] = [];
  onMessage = { addListener: (l: (m: unknown) => void) => void this.messageListeners.push(l) };
  onDisconnect = { addListener: (l: () => void) => void this.disconnectListeners.push(l) };
  postMessage(message: PlayerPageMessage) {
    if (this.disconnected) throw new Error('Attempting to use a disconnected port object');
    this.sent.push(message);
  }
  disconnect() {
    this.disconnected = true;
  }
  post(message: unknown) {
    for (const l of this.messageListeners) l(message);
  }
  drop() {
    this.disconnected = true;
    for (const l of this.disconnectListeners) l();
  }
}

function fakeConnect(ports: FakePort[]): () => FakePort {
  return () => {
    const port = new FakePort();
    ports.push(port);
    return port;
  };
}

/** The popup's UI port, as popup/main.ts opens it. */
function openUiPort(connect: () => FakePort, onMessage: (m: PortMessage) => void, onStatus: (s: LiveStatus) => void) {
  return openReconnectingPort<PortMessage, never>(connect, {
    accepts: { snapshot: true, job: true, removed: true, notice: true, aria2: true, watched: true, streams: true },
    liveOn: 'snapshot',
    onMessage,
    onStatus,
  });
}

describe('openReconnectingPort', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('passes port messages on and reconnects when the port drops', () => {
    const ports: FakePort[] = [];
    const messages: PortMessage[] = [];
    const statuses: LiveStatus[] = [];
    const port = openUiPort(
      fakeConnect(ports),
      (m) => messages.push(m),
      (s) => statuses.push(s),
    );
    ports[0]!.post({ type: 'snapshot', jobs: [], notices: [] });
    ports[0]!.post({ nonsense: true });
    ports[0]!.post({ type: 'player-state', stored: [], bytesFreed: false });
    expect(messages).toHaveLength(1);
    expect(statuses).toEqual(['connecting', 'live']);

    ports[0]!.drop(); // the worker was stopped
    expect(statuses.at(-1)).toBe('reconnecting');
    vi.advanceTimersByTime(1000);
    expect(ports).toHaveLength(2);
    ports[1]!.post({ type: 'snapshot', jobs: [], notices: [] });
    expect(statuses.at(-1)).toBe('live');

    port.stop();
    expect(ports[1]!.disconnected).toBe(true);
    ports[1]!.drop();
    vi.advanceTimersByTime(5000);
    expect(ports).toHaveLength(2);
  });

  it('keeps trying while connect throws', () => {
    let calls = 0;
    const port = new FakePort();
    openUiPort(
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

  it('does not reconnect once stopped while waiting to', () => {
    const ports: FakePort[] = [];
    const port = openUiPort(
      fakeConnect(ports),
      () => {},
      () => {},
    );
    ports[0]!.drop();
    port.stop();
    vi.advanceTimersByTime(5000);
    expect(ports).toHaveLength(1);
  });
});

describe('PlayerLink', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('attaches, reports the position, and after a reconnect attaches again with the last position', () => {
    const ports: FakePort[] = [];
    const states: unknown[] = [];
    const link = new PlayerLink(fakeConnect(ports), 'job-1', (state) => states.push(state));
    expect(ports[0]!.sent).toEqual([{ type: 'attach', id: 'job-1' }]);
    link.position(4096, 60);
    ports[0]!.post({ type: 'player-state', stored: [], bytesFreed: false });
    ports[0]!.post({ type: 'snapshot', jobs: [], notices: [] });
    expect(states).toHaveLength(1);

    ports[0]!.drop();
    link.position(8192); // lost: the port is gone
    vi.advanceTimersByTime(200);
    expect(ports[1]!.sent).toEqual([
      { type: 'attach', id: 'job-1' },
      { type: 'position', position: 8192, durationSeconds: 60 },
    ]);
    link.stop();
    expect(ports[1]!.disconnected).toBe(true);
  });
});
