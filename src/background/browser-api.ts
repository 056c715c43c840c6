/**
 * The one seam between the background logic and the browser: the few extension APIs Stitch
 * uses, narrowed to plain shapes. `real-browser-api.ts` adapts webextension-polyfill to it;
 * unit tests pass a fake. Nothing else in src/background touches `browser.*`.
 */

import type { Sender } from './sender';

export interface ApiEvent<L extends (...args: never[]) => unknown> {
  addListener(listener: L): void;
  removeListener(listener: L): void;
}

/** What downloads.onCreated tells about a browser download (fields we use). */
export interface BrowserDownload {
  id: number;
  url: string;
  finalUrl?: string;
  referrer?: string;
  mime?: string;
  /** -1 or 0 when unknown. */
  totalBytes?: number;
  byExtensionId?: string;
  /** Started in a private (incognito) window. */
  incognito?: boolean;
  state?: 'in_progress' | 'interrupted' | 'complete';
  filename?: string;
  /** False once the saved file was moved or deleted. */
  exists?: boolean;
  error?: string;
  /** What downloads.search tells of a download under way (watch-rescue.ts). */
  bytesReceived?: number;
  paused?: boolean;
  canResume?: boolean;
}

export interface DownloadDelta {
  id: number;
  state?: { current?: string };
  error?: { current?: string };
  filename?: { current?: string };
}

export interface DownloadRequest {
  url: string;
  filename?: string;
  conflictAction?: 'uniquify' | 'overwrite' | 'prompt';
  saveAs?: boolean;
}

export interface MenuClick {
  menuItemId: string | number;
  linkUrl?: string;
  srcUrl?: string;
  pageUrl?: string;
  /** The tab it was clicked in. */
  tabId?: number;
}

/** A connected page (the UI port). */
export interface UiPort {
  readonly name: string;
  /** Who opened the port. */
  readonly sender?: Sender;
  postMessage(message: unknown): void;
  onDisconnect: ApiEvent<() => void>;
  /** What the page posts (the player port's position reports). */
  onMessage?: ApiEvent<(message: unknown) => void>;
}

/** Details of a request seen by webRequest.onBeforeRequest (observation only). */
export interface SeenRequest {
  url: string;
  method: string;
  type?: string;
  /** The tab it was made in; -1 for none (a worker's own request). */
  tabId?: number;
}

/** A response a tab received whose headers name an HLS playlist (by its path or its Content-Type). */
export interface SeenPlaylist {
  url: string;
  tabId: number;
}

/**
 * A redirect answered to one of Stitch's own background requests, as webRequest saw it (observation
 * only): `redirectUrl` from onBeforeRedirect, or the `location` header of a 3xx from
 * onHeadersReceived (Firefox fires no onBeforeRedirect for a fetch with `redirect: 'manual'`).
 */
export interface SeenRedirect {
  /** The browser's id of the request; one request keeps it across its hops. */
  requestId: string;
  url: string;
  statusCode: number;
  redirectUrl?: string;
  location?: string;
}

/**
 * A declarativeNetRequest session rule, narrowed to what Stitch sets on its own requests: a
 * request header (referrer-rules.ts), and blocks and allowances of local addresses
 * (local-network-rules.ts).
 */
export interface SessionRule {
  id: number;
  priority?: number;
  condition: {
    urlFilter?: string;
    regexFilter?: string;
    isUrlFilterCaseSensitive?: boolean;
    initiatorDomains?: string[];
    requestDomains?: string[];
    resourceTypes?: string[];
    requestMethods?: string[];
    tabIds?: number[];
  };
  action: {
    type: string;
    requestHeaders?: { header: string; operation: 'set' | 'remove' | 'append'; value?: string }[];
  };
}

export interface BrowserApi {
  /** The extension's own id (to ignore our own downloads). */
  readonly extensionId: string;
  /** The origin of the extension's own pages, with a trailing slash: `chrome-extension://<id>/`. */
  readonly extensionOrigin: string;
  downloads: {
    download(request: DownloadRequest): Promise<number>;
    cancel(id: number): Promise<void>;
    pause(id: number): Promise<void>;
    resume(id: number): Promise<void>;
    erase(id: number): Promise<void>;
    search(id: number): Promise<BrowserDownload | undefined>;
    open(id: number): Promise<void>;
    show(id: number): Promise<void>;
    onCreated: ApiEvent<(item: BrowserDownload) => void>;
    onChanged: ApiEvent<(delta: DownloadDelta) => void>;
  };
  storage: {
    get(key: string): Promise<unknown>;
    set(key: string, value: unknown): Promise<void>;
    remove(key: string): Promise<void>;
  };
  menus: {
    /** Replaces every menu entry of Stitch with this one. */
    createOnce(entry: { id: string; title: string; contexts: string[] }): Promise<void>;
    /** Adds one more entry after createOnce. */
    add?(entry: { id: string; title: string; contexts: string[] }): Promise<void>;
    onClicked: ApiEvent<(click: MenuClick) => void>;
  };
  alarms: {
    create(name: string, periodInMinutes: number): Promise<void>;
    clear(name: string): Promise<void>;
    onAlarm: ApiEvent<(alarm: { name: string }) => void>;
  };
  runtime: {
    /** Any cheap extension API call: it resets the browser's idle timer for the worker. */
    ping(): Promise<void>;
    onStartup: ApiEvent<() => void>;
    onInstalled: ApiEvent<() => void>;
    /** Return a promise to answer; undefined to leave the message to another listener. */
    onMessage: ApiEvent<(message: unknown, sender: Sender) => Promise<unknown> | undefined>;
    onConnect: ApiEvent<(port: UiPort) => void>;
  };
  /** The toolbar button's badge (the number of active downloads); absent where unsupported. */
  action?: {
    setBadgeText(text: string): Promise<void>;
    setBadgeBackgroundColor(color: string): Promise<void>;
  };
  /** System notifications; absent without the permission. `id` replaces an earlier one of that id. */
  notifications?: {
    create(id: string, note: { title: string; message: string }): Promise<void>;
    onClicked: ApiEvent<(id: string) => void>;
  };
  /** Opens an extension page (the player) in a new tab. */
  tabs?: {
    create(url: string): Promise<void>;
    /** A tab's title and address; undefined once it is closed. */
    get?(tabId: number): Promise<{ title?: string; url?: string } | undefined>;
    onRemoved?: ApiEvent<(tabId: number) => void>;
  };
  /** Observation of requests (to know which downloads came from a POST); absent if not granted. */
  webRequest?: {
    onBeforeRequest: ApiEvent<(details: SeenRequest) => void>;
    /** Redirects of Stitch's own background requests (see redirect-log.ts). */
    onRedirect?: ApiEvent<(hop: SeenRedirect) => void>;
    /** HLS playlists the tabs load (a page's player asks for them): the streams the popup offers. */
    onPlaylist?: ApiEvent<(seen: SeenPlaylist) => void>;
  };
  /**
   * declarativeNetRequest session rules (kept across worker restarts, not browser restarts):
   * they set the Referer of Stitch's own requests, which fetch cannot, and stop them at local
   * addresses (redirects included). Absent if not granted.
   */
  sessionRules?: {
    get(): Promise<SessionRule[]>;
    /** Removes, then adds, at once (all or nothing). */
    update(change: { removeRuleIds?: number[]; addRules?: SessionRule[] }): Promise<void>;
  };
}
