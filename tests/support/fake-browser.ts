import type {
  ApiEvent,
  BrowserApi,
  BrowserDownload,
  DownloadDelta,
  DownloadRequest,
  MenuClick,
  SeenRequest,
  SessionRule,
  UiPort,
} from '../../src/background/browser-api';

/** An event whose listeners the test can fire. */
export class FakeEvent<L extends (...args: never[]) => unknown> implements ApiEvent<L> {
  readonly listeners = new Set<L>();
  addListener(listener: L): void {
    this.listeners.add(listener);
  }
  removeListener(listener: L): void {
    this.listeners.delete(listener);
  }
  fire(...args: Parameters<L>): unknown[] {
    return [...this.listeners].map((l) => l(...args));
  }
}

/**
 * The browser, faked at the BrowserApi seam: downloads are records the test completes or
 * interrupts; storage is a Map; every call is logged.
 */
export class FakeBrowser implements BrowserApi {
  readonly extensionId = 'stitch-test';
  readonly extensionOrigin = 'chrome-extension://stitch-test/';
  readonly calls: string[] = [];
  readonly items = new Map<number, BrowserDownload & { request?: DownloadRequest }>();
  readonly stored = new Map<string, unknown>();
  readonly alarmsSet = new Set<string>();
  pings = 0;
  private nextId = 100;
  /** When true, downloads.download completes each save at once. */
  autoComplete = true;

  readonly downloads = {
    download: async (request: DownloadRequest) => {
      const id = this.nextId++;
      this.calls.push(`download ${request.filename}`);
      this.items.set(id, {
        id,
        url: request.url,
        state: 'in_progress',
        filename: request.filename,
        byExtensionId: this.extensionId,
        request,
      });
      if (this.autoComplete) queueMicrotask(() => this.finishDownload(id, 'complete'));
      return id;
    },
    /** As Chrome: the interruption (USER_CANCELED, whoever cancelled) is reported before cancel() answers. */
    cancel: async (id: number) => {
      this.calls.push(`cancel ${id}`);
      if (this.items.get(id)?.state === 'in_progress') this.finishDownload(id, 'interrupted', 'USER_CANCELED');
    },
    pause: async (id: number) => void this.calls.push(`pause ${id}`),
    resume: async (id: number) => void this.calls.push(`resume ${id}`),
    erase: async (id: number) => {
      this.calls.push(`erase ${id}`);
      this.items.delete(id);
    },
    search: async (id: number) => this.items.get(id),
    open: async (id: number) => void this.calls.push(`open ${id}`),
    show: async (id: number) => void this.calls.push(`show ${id}`),
    onCreated: new FakeEvent<(item: BrowserDownload) => void>(),
    onChanged: new FakeEvent<(delta: DownloadDelta) => void>(),
  };
  readonly storage = {
    get: async (key: string) => structuredClone(this.stored.get(key)),
    set: async (key: string, value: unknown) => void this.stored.set(key, structuredClone(value)),
    remove: async (key: string) => void this.stored.delete(key),
  };
  readonly menus = {
    createOnce: async (entry: { id: string }) => void this.calls.push(`menu ${entry.id}`),
    onClicked: new FakeEvent<(click: MenuClick) => void>(),
  };
  readonly alarms = {
    create: async (name: string) => void this.alarmsSet.add(name),
    clear: async (name: string) => void this.alarmsSet.delete(name),
    onAlarm: new FakeEvent<(alarm: { name: string }) => void>(),
  };
  readonly runtime = {
    ping: async () => void this.pings++,
    onStartup: new FakeEvent<() => void>(),
    onInstalled: new FakeEvent<() => void>(),
    onMessage: new FakeEvent<(message: unknown, sender: { id?: string; url?: string }) => Promise<unknown> | undefined>(),
    onConnect: new FakeEvent<(port: UiPort) => void>(),
  };
  /** The toolbar badge's text, and every notification shown (id, title, message). */
  badge = '';
  readonly notes: { id: string; title: string; message: string }[] = [];
  readonly action = {
    setBadgeText: async (text: string) => void (this.badge = text),
    setBadgeBackgroundColor: async () => {},
  };
  readonly notifications = {
    create: async (id: string, note: { title: string; message: string }) => void this.notes.push({ id, ...note }),
    onClicked: new FakeEvent<(id: string) => void>(),
  };
  readonly webRequest = { onBeforeRequest: new FakeEvent<(details: SeenRequest) => void>() };
  /** declarativeNetRequest session rules; updates are logged in `calls` as `rules -1 +2`. */
  rules: SessionRule[] = [];
  readonly sessionRules = {
    get: async () => structuredClone(this.rules),
    update: async (change: { removeRuleIds?: number[]; addRules?: SessionRule[] }) => {
      // As the browser: removals first, then additions; ids positive and unique, or nothing changes.
      const removed = new Set(change.removeRuleIds ?? []);
      const next = [...this.rules.filter((r) => !removed.has(r.id)), ...structuredClone(change.addRules ?? [])];
      for (const rule of change.addRules ?? []) {
        if (!Number.isInteger(rule.id) || rule.id < 1) throw new Error(`Rule with id ${rule.id}: invalid id`);
        if (next.filter((r) => r.id === rule.id).length > 1) throw new Error(`Rule with id ${rule.id} does not have a unique ID.`);
      }
      this.rules = next;
      this.calls.push(['rules', ...[...removed].map((id) => `-${id}`), ...(change.addRules ?? []).map((r) => `+${r.id}`)].join(' '));
    },
  };

  /** A download the browser itself started (as from a link click). */
  startBrowserDownload(item: Omit<BrowserDownload, 'id'>): BrowserDownload {
    const full = { state: 'in_progress' as const, ...item, id: this.nextId++ };
    this.items.set(full.id, full);
    return full;
  }

  finishDownload(id: number, state: 'complete' | 'interrupted', error?: string): void {
    const item = this.items.get(id);
    if (item) item.state = state;
    this.downloads.onChanged.fire({ id, state: { current: state }, error: error ? { current: error } : undefined });
  }
}

/** A UI port the test can read. */
export function fakePort(name: string): UiPort & { messages: unknown[]; disconnect(): void } {
  const onDisconnect = new FakeEvent<() => void>();
  const messages: unknown[] = [];
  return { name, messages, postMessage: (m) => messages.push(structuredClone(m)), onDisconnect, disconnect: () => onDisconnect.fire() };
}
