import type { BrowserStore } from '../storage/stored-blob-url';
import { startBackground } from './background';
import { platformBlobUrls } from './saving/blob-url';
import { realBrowserApi } from './real-browser-api';
import { browserEstimate } from './jobs/storage-space';
import { listenForStoragePort, openBrowserStore } from './open-store';

// The extension's background: Chrome's service worker and Firefox's event page.
if (typeof ServiceWorkerGlobalScope !== 'undefined' && self instanceof ServiceWorkerGlobalScope) listenForStoragePort(self);
let store: Promise<BrowserStore> | undefined;
const openStore = () => (store ??= openBrowserStore());

startBackground({
  api: realBrowserApi(),
  store: openStore,
  blobUrls: platformBlobUrls(async (jobId, start, end) => (await openStore()).readBlobs(jobId, start, end)),
  estimate: browserEstimate(),
});
