import { PLAYER_PORT } from '../messages';
import { NOT_CONNECTED } from '../pages-shared/connection';
import { localisePage, t } from '../words/i18n';
import { runPlayer, type PlayerQuery } from './player-controller';
import { PlayerPage } from './player-page';

/** Player entry: ?id=<jobId> (from the popup) or ?url=<encoded URL> (context menu, other tools). */
async function start(): Promise<void> {
  localisePage('playerTitle');
  const page = new PlayerPage(document.getElementById('app') ?? document.body);
  const params = new URLSearchParams(location.search);
  const id = params.get('id');
  const url = params.get('url');
  const query: PlayerQuery | undefined = id ? { id } : url ? { url } : undefined;
  if (!query) return page.say(t('playerNoQuery'), 'error');
  const chrome = (globalThis as { chrome?: { runtime?: { id?: string } } }).chrome;
  if (!chrome?.runtime?.id) return page.say(NOT_CONNECTED, 'error');
  // Loaded lazily: the polyfill throws on import outside an extension.
  const { default: browser } = await import('webextension-polyfill');
  await runPlayer(
    page,
    {
      send: (message) => browser.runtime.sendMessage(message),
      connect: () => browser.runtime.connect({ name: PLAYER_PORT }),
    },
    query,
  );
}

void start();
