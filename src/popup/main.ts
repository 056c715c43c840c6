import { connectToBackground } from '../pages-shared/connection';
import { localisePage } from '../words/i18n';
import { openLivePort } from './live-port';
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
  const stop = openLivePort(
    connection.connect,
    (message) => page.apply(message),
    (status) => page.setStatus(status),
  );
  addEventListener('pagehide', stop);
}

void start();
