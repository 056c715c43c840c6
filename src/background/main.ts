import { openIdbStore, type IdbStore } from '../storage/idb-store';
import { startBackground } from './background';
import { platformBlobUrls } from './blob-url';
import { realBrowserApi } from './real-browser-api';
import { browserEstimate } from './storage-space';

// The extension's background: Chrome's service worker and Firefox's event page.
let store: Promise<IdbStore> | undefined;
const openStore = () => (store ??= openIdbStore());

startBackground({
  api: realBrowserApi(),
  store: openStore,
  blobUrls: platformBlobUrls(async (jobId, start, end) => (await openStore()).readBlobs(jobId, start, end)),
  estimate: browserEstimate(),
});
