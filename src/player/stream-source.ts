import { STREAM_PATH } from '../messages';

/** True where the service-worker route exists: Chrome's extension pages (Firefox's have none). */
export function hasStreamRoute(): boolean {
  return typeof navigator !== 'undefined' && navigator.serviceWorker !== undefined;
}

/** The job's stream URL, answered by the extension's service worker from the stored bytes. */
export function streamUrl(jobId: string): string {
  return new URL(`${STREAM_PATH}${encodeURIComponent(jobId)}`, location.href).href;
}

/**
 * Resolves once the page is controlled by the extension's service worker: before that, the
 * element's requests would bypass it (the first page opened after an install or update may
 * not be controlled yet; the worker calls clients.claim()). False after `timeoutMs`.
 */
export function controlled(timeoutMs = 10_000): Promise<boolean> {
  const container = navigator.serviceWorker;
  if (container.controller) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      container.removeEventListener('controllerchange', changed);
      resolve(value);
    };
    const changed = () => done(container.controller !== null);
    const timer = setTimeout(() => done(container.controller !== null), timeoutMs);
    container.addEventListener('controllerchange', changed);
  });
}
