import type { BrowserStore } from '../storage/stored-blob-url';
import { startBackground } from './background';
import { platformBlobUrls } from './saving/blob-url';
import { realBrowserApi } from './real-browser-api';
import { browserEstimate } from './jobs/storage-space';
import { listenForStoragePort, openBrowserStore } from './open-store';

// The extension's background: Chrome's service worker and Firefox's event page.
const serviceWorker = typeof ServiceWorkerGlobalScope !== 'undefined' && self instanceof ServiceWorkerGlobalScope;
if (typeof ServiceWorkerGlobalScope !== 'undefined' && self instanceof ServiceWorkerGlobalScope) listenForStoragePort(self);
let store: Promise<BrowserStore> | undefined;
const openStore = () => (store ??= openBrowserStore());

startBackground({
  api: realBrowserApi(),
  store: openStore,
  blobUrls: platformBlobUrls(async (jobId, start, end) => (await openStore()).readBlobs(jobId, start, end)),
  // Chrome's quota is the free disk; Firefox's (its event page, no service worker) a share of the disk's size.
  estimate: browserEstimate(serviceWorker),
});
