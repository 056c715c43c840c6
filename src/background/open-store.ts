import { deleteDB } from 'idb';
import { OPFS_PORT_MESSAGE } from '../offscreen/protocol';
import { openIdbStore } from '../storage/idb-store';
import { OpfsWriter, type OpfsPort } from '../storage/opfs-files';
import { openOpfsStore } from '../storage/opfs-store';
import { moveJobs } from '../storage/move-jobs';
import type { BrowserStore } from '../storage/stored-blob-url';
import { askOffscreen } from './offscreen-document';

/** The job id the OPFS check writes to and removes: never a real job's (those are UUIDs). */
const CHECK_JOB = 'stitch-opfs-check';
const PORT_TIMEOUT_MS = 10_000;

/**
 * Downloads are kept in the origin private file system, written by a worker: Firefox's event
 * page starts it, Chrome's offscreen document does for the service worker. On this machine it
 * wrote 1 GiB at 250–1000 MB/s and a blob URL of it saved at 320–530 MB/s, where IndexedDB wrote
 * 86–230 and saved 77–220 (measured 2026-11-23). Jobs an older version kept in IndexedDB move
 * over once. Where OPFS fails, IndexedDB it is.
 */
export async function openBrowserStore(): Promise<BrowserStore> {
  const opfs = await openOpfs().catch((error: unknown) => {
    console.warn('Stitch: the private file system does not work here; keeping downloads in IndexedDB', error);
    return undefined;
  });
  if (!opfs) return openIdbStore();
  if ((await indexedDB.databases()).some((db) => db.name === 'stitch')) {
    const idb = await openIdbStore();
    await moveJobs(idb, opfs);
    idb.close();
    // Every job moved: the empty database would only be opened again at each start.
    await deleteDB('stitch');
  }
  return opfs;
}

async function openOpfs(): Promise<BrowserStore | undefined> {
  if (typeof navigator.storage?.getDirectory !== 'function') return undefined;
  const port = typeof Worker === 'function' ? new Worker('opfs-worker.js', { type: 'module' }) : await offscreenStoragePort();
  if (!port) return undefined;
  const writer = new OpfsWriter(port);
  await writer.write(CHECK_JOB, 0, new Uint8Array(1));
  await writer.remove(CHECK_JOB);
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
async function offscreenStoragePort(): Promise<OpfsPort | undefined> {
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
