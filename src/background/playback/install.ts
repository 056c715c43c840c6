import type { BrowserStore } from '../../storage/stored-blob-url';
import type { BrowserApi } from '../browser-api';
import { isOwnPage } from '../sender';
import { PlaybackHub, type PlaybackJobs } from './playback';
import { installStreamRoute, type StreamScope } from './stream-route';

export interface PlaybackDeps {
  api: BrowserApi;
  /** The jobs, read from the store first: players follow a job's events, also in a restarted worker. */
  jobs: () => Promise<PlaybackJobs>;
  store: () => Promise<BrowserStore>;
  /** Chrome's service worker scope; absent in Firefox. */
  scope: StreamScope | undefined;
}

/** The players: their ports, and (Chrome) the worker's stream route. Registers its listeners synchronously. */
export function installPlayback({ api, jobs, store, scope }: PlaybackDeps): PlaybackHub {
  const hub = new PlaybackHub({ jobs, store });
  api.runtime.onConnect.addListener((port) => {
    if (isOwnPage(port.sender, api)) hub.connect(port);
  });
  // Chrome's service worker answers the player's stream URLs; Firefox's event page has no fetch events.
  if (scope) installStreamRoute(scope, { hub, jobs, store });
  return hub;
}
