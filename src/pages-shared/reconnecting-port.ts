/** The part of `runtime.Port` the pages use (a fake in tests). */
export interface PortLike<Out> {
  postMessage(message: Out): void;
  onMessage: { addListener(listener: (message: unknown) => void): void };
  onDisconnect: { addListener(listener: () => void): void };
  disconnect(): void;
}

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

export interface PortHandlers<In extends { type: string }, Out> {
  /** Every message type this page reads (a record, so that a new type cannot be left out); others are ignored. */
  accepts: Record<In['type'], true>;
  /** The message that shows the background serves this page again (a snapshot, a state): the back-off restarts. */
  liveOn: In['type'];
  onMessage(message: In): void;
  onStatus?(status: LiveStatus): void;
  /** What to post each time the port opens, the first time and after every reconnect (the player attaches). */
  greeting?(): Out[];
}

export interface ReconnectingPort<Out> {
  /** Posts on the current port; lost while disconnected, which the greeting after a reconnect makes up for. */
  post: (message: Out) => void;
  stop: () => void;
}

/** Waits before reconnecting: quick at first (a restarted worker answers at once), then calmer. */
const RETRY_MS = [200, 500, 1000, 2000];

/**
 * Keeps a page's port to the background open. When the port drops (the service worker was
 * stopped, the extension reloaded) it reconnects, which wakes the worker, and greets it again;
 * what the background posts then replaces whatever the page had.
 */
export function openReconnectingPort<In extends { type: string }, Out>(
  connect: () => PortLike<Out>,
  handlers: PortHandlers<In, Out>,
): ReconnectingPort<Out> {
  let port: PortLike<Out> | undefined;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const post = (message: Out) => {
    try {
      port?.postMessage(message);
    } catch {
      // Disconnected: onDisconnect reconnects and greets again.
    }
  };
  const open = () => {
    timer = undefined;
    try {
      port = connect();
    } catch {
      return retry(); // extension context not ready or being reloaded
    }
    port.onMessage.addListener((message) => {
      const type = (message as { type?: unknown } | null)?.type;
      if (typeof type !== 'string' || !Object.hasOwn(handlers.accepts, type)) return;
      if (type === handlers.liveOn) {
        attempt = 0;
        handlers.onStatus?.('live');
      }
      handlers.onMessage(message as In);
    });
    port.onDisconnect.addListener(() => {
      port = undefined;
      retry();
    });
    for (const message of handlers.greeting?.() ?? []) post(message);
  };
  const retry = () => {
    if (stopped) return;
    handlers.onStatus?.('reconnecting');
    timer = setTimeout(open, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]);
  };

  handlers.onStatus?.('connecting');
  open();
  return {
    post,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      port?.disconnect();
    },
  };
}
