import type { HttpFetch, HttpRequest, HttpResponse } from '../../engine';
import { backgroundFetch } from '../network/redirect-log';

/**
 * Browsers give an extension at most six HTTP/1.1 connections per host (Chrome's socket pool,
 * Firefox's max-persistent-connections-per-server), and a freed one goes to the requests waiting
 * in the order they came. The browser's own downloads are not among them: Chromium keeps a page's
 * requests in the page's network partition.
 */
export const BROWSER_CONNECTIONS_PER_HOST = 6;

/**
 * Stitch's downloads together use one fewer, so a take-over's one-byte probe (probe.ts) always
 * finds a connection: behind six block requests of running downloads, each up to many seconds
 * on a slow server, it waited past its timeout and the download was left to the browser.
 */
export const DOWNLOAD_CONNECTIONS_PER_HOST = BROWSER_CONNECTIONS_PER_HOST - 1;

interface Host {
  open: number;
  waiting: { start: () => void }[];
}

/**
 * `fetcher` with at most `limit` requests open per origin; the others wait their turn here. A
 * request holds its place until its signal aborts, as the engine does at the end of every
 * request (exchange.ts), a body read to its end included, or until the fetch fails. A request
 * without a signal could not say when it ends: it is not counted.
 */
export function sharingHostConnections(fetcher: HttpFetch, limit = DOWNLOAD_CONNECTIONS_PER_HOST): HttpFetch {
  const hosts = new Map<string, Host>();

  const release = (origin: string) => {
    const host = hosts.get(origin);
    if (!host) return;
    const next = host.waiting.shift();
    if (next) next.start();
    else if (--host.open === 0) hosts.delete(origin);
  };

  const acquire = (origin: string, signal: AbortSignal): Promise<void> => {
    const host = hosts.get(origin) ?? { open: 0, waiting: [] };
    hosts.set(origin, host);
    if (host.open < limit) {
      host.open++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const turn = {
        start: () => {
          signal.removeEventListener('abort', giveUp);
          resolve();
        },
      };
      const giveUp = () => {
        host.waiting.splice(host.waiting.indexOf(turn), 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', giveUp, { once: true });
      host.waiting.push(turn);
    });
  };

  return async (url: string, init?: HttpRequest): Promise<HttpResponse> => {
    const signal = init?.signal;
    if (!signal) return fetcher(url, init);
    signal.throwIfAborted();
    const origin = new URL(url).origin;
    await acquire(origin, signal);
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      release(origin);
    };
    // It may have aborted while its turn was being handed over.
    if (signal.aborted) {
      done();
      signal.throwIfAborted();
    }
    signal.addEventListener('abort', done, { once: true });
    try {
      return await fetcher(url, init);
    } catch (error) {
      done();
      throw error;
    }
  };
}

/** The fetch of Stitch's downloads (every job's, and the start probe's measuring request): one budget for all. */
export const downloadFetch = sharingHostConnections(backgroundFetch);
