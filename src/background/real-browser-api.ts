import browser from 'webextension-polyfill';
import { looksLikeStreamManifest } from '../engine';
import type { ApiEvent, BrowserApi, MenuClick, SeenPlaylist, SeenRedirect } from './browser-api';

/** The BrowserApi of the running extension, over webextension-polyfill. */
export function realBrowserApi(): BrowserApi {
  const downloads = browser.downloads;
  return {
    extensionId: browser.runtime.id,
    extensionOrigin: browser.runtime.getURL(''),
    downloads: {
      download: (request) => downloads.download(request),
      cancel: (id) => downloads.cancel(id),
      pause: (id) => downloads.pause(id),
      resume: (id) => downloads.resume(id),
      erase: async (id) => void (await downloads.erase({ id })),
      search: async (id) => (await downloads.search({ id }))[0],
      open: (id) => downloads.open(id),
      show: async (id) => void (await downloads.show(id)),
      onCreated: downloads.onCreated,
      onChanged: downloads.onChanged,
    },
    storage: {
      get: async (key) => (await browser.storage.local.get(key))[key],
      set: (key, value) => browser.storage.local.set({ [key]: value }),
      remove: (key) => browser.storage.local.remove(key),
    },
    menus: {
      async createOnce(entry) {
        await browser.contextMenus.removeAll();
        browser.contextMenus.create({ ...entry, contexts: entry.contexts as never });
      },
      async add(entry) {
        browser.contextMenus.create({ ...entry, contexts: entry.contexts as never });
      },
      onClicked: menuClicks(),
    },
    alarms: {
      create: async (name, periodInMinutes) => browser.alarms.create(name, { periodInMinutes, delayInMinutes: periodInMinutes }),
      clear: async (name) => void (await browser.alarms.clear(name)),
      onAlarm: browser.alarms.onAlarm,
    },
    runtime: {
      ping: async () => void (await browser.runtime.getPlatformInfo()),
      onStartup: browser.runtime.onStartup,
      onInstalled: browser.runtime.onInstalled,
      onMessage: browser.runtime.onMessage,
      onConnect: browser.runtime.onConnect,
    },
    action: browser.action && {
      setBadgeText: (text) => browser.action.setBadgeText({ text }),
      setBadgeBackgroundColor: (color) => browser.action.setBadgeBackgroundColor({ color }),
    },
    notifications: browser.notifications && {
      create: async (id, note) =>
        void (await browser.notifications.create(id, { type: 'basic', iconUrl: browser.runtime.getURL('icons/icon-128.png'), ...note })),
      onClicked: browser.notifications.onClicked,
    },
    tabs: {
      create: async (url) => void (await browser.tabs.create({ url: browser.runtime.getURL(url) })),
      get: async (tabId) => {
        const tab = await browser.tabs.get(tabId).catch(() => undefined);
        return tab && { title: tab.title, url: tab.url };
      },
      onRemoved: browser.tabs.onRemoved,
    },
    webRequest: browser.webRequest && {
      onBeforeRequest: {
        // Observation only (no 'blocking'): which top-level and frame requests were POSTs.
        addListener: (listener) =>
          browser.webRequest.onBeforeRequest.addListener(listener, {
            urls: ['http://*/*', 'https://*/*'],
            types: ['main_frame', 'sub_frame'],
          }),
        removeListener: (listener) => browser.webRequest.onBeforeRequest.removeListener(listener),
      },
      onRedirect: ownRedirects(browser.runtime.getURL('')),
      onPlaylist: playlists(),
    },
    sessionRules: browser.declarativeNetRequest && {
      get: () => browser.declarativeNetRequest.getSessionRules(),
      update: (change) => browser.declarativeNetRequest.updateSessionRules(change as never),
    },
  };
}

/** What the redirect events tell of a request (the fields read; Chrome names the initiator, Firefox the originUrl). */
interface RedirectDetails {
  requestId: string;
  url: string;
  statusCode: number;
  redirectUrl?: string;
  responseHeaders?: { name: string; value?: string }[];
  initiator?: string;
  originUrl?: string;
}

/**
 * The redirects answered to Stitch's own background requests (no tab, fetch, started by the
 * extension's origin; a web page's service worker has no tab either): onBeforeRedirect, and the
 * Location of a 3xx's headers, since Firefox fires no onBeforeRedirect when fetch does not follow
 * the redirect (`redirect: 'manual'`). Observation only: neither needs 'blocking'.
 */
function ownRedirects(extensionOrigin: string): ApiEvent<(hop: SeenRedirect) => void> {
  const filter = { urls: ['http://*/*', 'https://*/*'], types: ['xmlhttprequest' as const], tabId: -1 };
  const base = extensionOrigin.replace(/\/$/, '');
  const own = (d: RedirectDetails) => [d.initiator, d.originUrl].some((url) => url === base || url?.startsWith(`${base}/`));
  const seen = (d: RedirectDetails): SeenRedirect => ({
    requestId: d.requestId,
    url: d.url,
    statusCode: d.statusCode,
    redirectUrl: d.redirectUrl,
    location: d.responseHeaders?.find((h) => h.name.toLowerCase() === 'location')?.value,
  });
  return wrappedEvent(
    (listener: (hop: SeenRedirect) => void) => (d: RedirectDetails) => {
      const redirect = d.redirectUrl !== undefined || (d.statusCode >= 300 && d.statusCode < 400);
      if (redirect && own(d)) listener(seen(d));
    },
    (observe) => {
      browser.webRequest.onBeforeRedirect.addListener(observe, filter);
      browser.webRequest.onHeadersReceived.addListener(observe, filter, ['responseHeaders']);
    },
    (observe) => {
      browser.webRequest.onBeforeRedirect.removeListener(observe);
      browser.webRequest.onHeadersReceived.removeListener(observe);
    },
  );
}

/** Clicks on Stitch's menu entries, with the tab they were made in (the event's second argument). */
function menuClicks(): ApiEvent<(click: MenuClick) => void> {
  return wrappedEvent(
    (listener: (click: MenuClick) => void) => (info: MenuClick, tab?: { id?: number }) => listener({ ...info, tabId: tab?.id }),
    (observe) => browser.contextMenus.onClicked.addListener(observe),
    (observe) => browser.contextMenus.onClicked.removeListener(observe),
  );
}

/** What onHeadersReceived tells of a response (the fields read). */
interface ResponseDetails {
  url: string;
  tabId: number;
  statusCode: number;
  responseHeaders?: { name: string; value?: string }[];
}

/**
 * The HLS playlists the tabs load, by their headers (observation only: no 'blocking'). A page's
 * player asks for them with fetch or XHR; a <video> given one directly asks as media.
 */
function playlists(): ApiEvent<(seen: SeenPlaylist) => void> {
  const filter = { urls: ['http://*/*', 'https://*/*'], types: ['xmlhttprequest' as const, 'media' as const, 'other' as const] };
  return wrappedEvent(
    (listener: (seen: SeenPlaylist) => void) => (d: ResponseDetails) => {
      if (d.tabId < 0 || (d.statusCode !== 200 && d.statusCode !== 206)) return;
      const type = d.responseHeaders?.find((h) => h.name.toLowerCase() === 'content-type')?.value;
      if (looksLikeStreamManifest(d.url, type)) listener({ url: d.url, tabId: d.tabId });
    },
    (observe) => browser.webRequest.onHeadersReceived.addListener(observe, filter, ['responseHeaders']),
    (observe) => browser.webRequest.onHeadersReceived.removeListener(observe),
  );
}

/**
 * An event of the browser's, seen through `wrap`: each listener added gets its own wrapper of the
 * browser's event (or events), which `remove` takes away again.
 */
function wrappedEvent<L extends (...args: never[]) => unknown, W>(
  wrap: (listener: L) => W,
  add: (observe: W) => void,
  remove: (observe: W) => void,
): ApiEvent<L> {
  const added = new Map<L, W>();
  return {
    addListener(listener) {
      const observe = wrap(listener);
      added.set(listener, observe);
      add(observe);
    },
    removeListener(listener) {
      const observe = added.get(listener);
      if (observe === undefined) return;
      added.delete(listener);
      remove(observe);
    },
  };
}
