import { deleteDB } from 'idb';
import { OPFS_PORT_MESSAGE } from '../offscreen/protocol';
import { openIdbStore } from '../storage/idb-store';
import { OpfsWriter } from '../storage/opfs-files';
import { OPFS_STORE_DB, openOpfsStore } from '../storage/opfs-store';
import { moveJobs } from '../storage/move-jobs';
import type { BrowserStore } from '../storage/stored-blob-url';
import { askOffscreen } from './offscreen-document';

/** The job id the OPFS check writes to and removes: never a real job's (those are UUIDs). */
const CHECK_JOB = 'stitch-opfs-check';
const PORT_TIMEOUT_MS = 10_000;
/** Tries of OPFS where the profile keeps downloads there, the n-th after n × OPFS_RETRY_MS. */
const OPFS_ATTEMPTS = 3;
const OPFS_RETRY_MS = 1000;

/**
 * Downloads are kept in the origin private file system, written by a worker: Firefox's event
 * page starts it, Chrome's offscreen document does for the service worker. On this machine it
 * wrote 1 GiB at 250–1000 MB/s and a blob URL of it saved at 320–530 MB/s, where IndexedDB wrote
 * 86–230 and saved 77–220 (measured 2026-11-23). Jobs an older version kept in IndexedDB move
 * over once. Where OPFS fails, IndexedDB it is.
 */
export async function openBrowserStore(): Promise<BrowserStore> {
  const databases = new Set((await indexedDB.databases()).map((db) => db.name));
  // A profile whose downloads are in OPFS already tries again before IndexedDB takes over: its
  // jobs would not show until a start where OPFS works (they are kept, and new ones move over then).
  const opfs = await openOpfsTrying(databases.has(OPFS_STORE_DB) ? OPFS_ATTEMPTS : 1);
  if (!opfs) return openIdbStore();
  if (databases.has('stitch')) {
    const idb = await openIdbStore();
    await moveJobs(idb, opfs);
    idb.close();
    // Every job moved: the empty database would only be opened again at each start.
    await deleteDB('stitch');
  }
  return opfs;
}

async function openOpfsTrying(attempts: number): Promise<BrowserStore | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openOpfs();
    } catch (error) {
      if (attempt >= attempts) {
        console.warn('Stitch: the private file system does not work here; keeping downloads in IndexedDB', error);
        return undefined;
      }
      console.warn(`Stitch: the private file system failed (attempt ${attempt} of ${attempts}); trying again`, error);
      await new Promise((resolve) => setTimeout(resolve, OPFS_RETRY_MS * attempt));
    }
  }
}

async function openOpfs(): Promise<BrowserStore | undefined> {
  if (typeof navigator.storage?.getDirectory !== 'function') return undefined;
  const port = typeof Worker === 'function' ? new Worker('opfs-worker.js', { type: 'module' }) : await offscreenStoragePort();
  if (!port) return undefined;
  const writer = new OpfsWriter(port);
  try {
    await writer.write(CHECK_JOB, 0, new Uint8Array(1));
    await writer.remove(CHECK_JOB);
  } catch (error) {
    // A try that failed leaves no worker (or port to one) behind.
    if (port instanceof MessagePort) port.close();
    else port.terminate();
    throw error;
  }
  return openOpfsStore(writer);
}

let portArrived: ((port: MessagePort) => void) | undefined;

/**
 * Chrome's service worker: listens for the storage worker's port from the offscreen document.
 * Called in the script's first run: a service worker must add its event listeners then.
 */
export function listenForStoragePort(scope: ServiceWorkerGlobalScope): void {
  scope.addEventListener('message', (event: ExtendableMessageEvent) => {
    const port = event.ports[0];
    if ((event.data as { type?: unknown } | null)?.type === OPFS_PORT_MESSAGE && port) portArrived?.(port);
  });
}

/** A port to the storage worker of the offscreen document (Chrome's service worker). */
async function offscreenStoragePort(): Promise<MessagePort | undefined> {
  if (typeof chrome === 'undefined' || typeof chrome.offscreen?.createDocument !== 'function') return undefined;
  const port = new Promise<MessagePort>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the offscreen document sent no port to the storage worker')), PORT_TIMEOUT_MS);
    portArrived = (arrived) => {
      clearTimeout(timer);
      resolve(arrived);
    };
  });
  port.catch(() => {});
  const reply = await askOffscreen({ target: 'offscreen', type: 'connect-storage' });
  if (!reply.ok) throw new Error(reply.error);
  const connected = await port;
  connected.start();
  return connected;
}
