import type { PortMessage } from '../messages';

/** The part of `runtime.Port` the popup uses (a fake in tests). */
export interface PortLike {
  onMessage: { addListener(listener: (message: unknown) => void): void };
  onDisconnect: { addListener(listener: () => void): void };
  disconnect(): void;
}

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

/** Waits before reconnecting: quick at first (a restarted worker answers at once), then calmer. */
const RETRY_MS = [200, 500, 1000, 2000];

/**
 * Keeps a UI port open: the background posts a snapshot then every change. When the port drops
 * (the service worker was stopped, the extension reloaded) it reconnects, which wakes the worker,
 * and the fresh snapshot replaces whatever the page had. Returns a function that stops it.
 */
export function openLivePort(
  connect: () => PortLike,
  onMessage: (message: PortMessage) => void,
  onStatus: (status: LiveStatus) => void,
): () => void {
  let port: PortLike | undefined;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const open = () => {
    timer = undefined;
    try {
      port = connect();
    } catch {
      return retry(); // extension context not ready or being reloaded
    }
    port.onMessage.addListener((message) => {
      if (!isPortMessage(message)) return;
      if (message.type === 'snapshot') {
        attempt = 0;
        onStatus('live');
      }
      onMessage(message);
    });
    port.onDisconnect.addListener(() => {
      port = undefined;
      retry();
    });
  };
  const retry = () => {
    if (stopped) return;
    onStatus('reconnecting');
    timer = setTimeout(open, RETRY_MS[Math.min(attempt++, RETRY_MS.length - 1)]);
  };

  onStatus('connecting');
  open();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    port?.disconnect();
  };
}

function isPortMessage(message: unknown): message is PortMessage {
  const type = (message as { type?: unknown } | null)?.type;
  return type === 'snapshot' || type === 'job' || type === 'removed' || type === 'notice' || type === 'aria2';
}
