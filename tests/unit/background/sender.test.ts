import 'fake-indexeddb/auto';
import * as fake from 'fake-indexeddb';
import { afterEach, describe, expect, test } from 'vitest';
import { startBackground } from '../../../src/background/background';
import type { UiPort } from '../../../src/background/browser-api';
import { isOwnPage } from '../../../src/background/sender';
import { UI_PORT } from '../../../src/messages';
import { openIdbStore, type IdbStore } from '../../../src/storage/idb-store';
import { FakeBrowser, FakeEvent } from '../../support/fake-browser';

const OWN = { id: 'stitch-test', url: 'chrome-extension://stitch-test/popup.html' };
const STRANGERS = [
  { id: 'other-extension', url: 'chrome-extension://other-extension/page.html' },
  { id: 'stitch-test', url: 'https://example.com/page' }, // a content script or web page of ours would say this
  { id: 'stitch-test' },
  { url: 'chrome-extension://stitch-test/popup.html' },
  {},
];

const stores: IdbStore[] = [];
afterEach(() => stores.splice(0).forEach((s) => s.close()));

function background() {
  const browser = new FakeBrowser();
  startBackground({
    api: browser,
    store: async () => {
      const store = await openIdbStore({ indexedDB: new fake.IDBFactory(), records: 'bytes' });
      stores.push(store);
      return store;
    },
    blobUrls: { make: async () => 'blob:test', revoke: async () => {} },
    estimate: async () => ({}),
  });
  return browser;
}

function port(sender: { id?: string; url?: string }): UiPort & { posted: unknown[] } {
  const posted: unknown[] = [];
  return { name: UI_PORT, sender, posted, postMessage: (m) => void posted.push(m), onDisconnect: new FakeEvent<() => void>() };
}

describe('the background answers only its own pages', () => {
  test('same extension id and a page under its origin', () => {
    const api = { extensionId: 'stitch-test', extensionOrigin: 'chrome-extension://stitch-test/' };
    expect(isOwnPage(OWN, api)).toBe(true);
    for (const sender of STRANGERS) expect(isOwnPage(sender, api), JSON.stringify(sender)).toBe(false);
    expect(isOwnPage(undefined, api)).toBe(false);
  });

  test("a request from anything else than Stitch's pages gets no answer and changes nothing", async () => {
    const browser = background();
    const addUrl = { type: 'add-url', url: 'https://example.com/file.iso' };
    for (const sender of STRANGERS) expect(browser.runtime.onMessage.fire(addUrl, sender), JSON.stringify(sender)).toEqual([undefined]);
    const [reply] = browser.runtime.onMessage.fire({ type: 'list-jobs' }, OWN);
    expect(await reply).toMatchObject({ ok: true, value: { jobs: [] } });
  });

  test('live-update ports are served to its own pages only', async () => {
    const browser = background();
    const stranger = port(STRANGERS[0]!);
    const own = port(OWN);
    browser.runtime.onConnect.fire(stranger);
    browser.runtime.onConnect.fire(own);
    await expect.poll(() => own.posted.length).toBeGreaterThan(0);
    expect(stranger.posted).toEqual([]);
  });
});
