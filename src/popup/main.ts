import { connectToBackground } from '../pages-shared/connection';
import { localisePage } from '../words/i18n';
import type { PortMessage } from '../messages';
import { openReconnectingPort } from '../pages-shared/reconnecting-port';
import { PopupPage } from './popup-page';

/** Popup entry: draws the page at once, then follows the background over the UI port. */
async function start(): Promise<void> {
  localisePage('extName');
  const root = document.getElementById('app') ?? document.body;
  const connection = await connectToBackground().catch(() => undefined);
  const page = new PopupPage(root, {
    send: connection?.send,
    openOptions: connection && (() => void connection.openOptionsPage().then(() => window.close())),
    openDownload: connection?.openDownload,
  });
  if (!connection) return;
  // The UI port: the background posts a snapshot, then every change.
  const port = openReconnectingPort<PortMessage, never>(connection.connect, {
    accepts: { snapshot: true, job: true, removed: true, notice: true, aria2: true, watched: true, streams: true },
    liveOn: 'snapshot',
    onMessage: (message) => page.apply(message),
    onStatus: (status) => page.setStatus(status),
  });
  addEventListener('pagehide', port.stop);
}

void start();
