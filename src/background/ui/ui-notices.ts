import type { UiNotice } from '../../messages';
import type { BrowserApi } from '../browser-api';

const KEY = 'ui-notices';
const KEEP = 20;

/** Page-wide notices (downloads left to the browser, and why), kept across worker restarts. */
export class UiNotices {
  private list: UiNotice[] = [];
  private loaded: Promise<void> | undefined;

  constructor(
    private readonly api: BrowserApi,
    private readonly onNotice: (notice: UiNotice) => void,
  ) {}

  async all(): Promise<UiNotice[]> {
    await this.load();
    return [...this.list];
  }

  async add(message: string, url?: string): Promise<UiNotice> {
    await this.load();
    const notice: UiNotice = { id: crypto.randomUUID(), at: Date.now(), message, url };
    this.list = [...this.list, notice].slice(-KEEP);
    await this.api.storage.set(KEY, this.list).catch(() => {});
    this.onNotice(notice);
    return notice;
  }

  async clear(): Promise<void> {
    this.list = [];
    await this.api.storage.remove(KEY);
  }

  private load(): Promise<void> {
    this.loaded ??= this.api.storage
      .get(KEY)
      .then((raw) => {
        const stored = Array.isArray(raw) ? raw.filter(isNotice) : [];
        this.list = [...stored, ...this.list].slice(-KEEP);
      })
      .catch(() => {});
    return this.loaded;
  }
}

function isNotice(value: unknown): value is UiNotice {
  const n = value as Partial<UiNotice> | null;
  return typeof n === 'object' && n !== null && typeof n.id === 'string' && typeof n.message === 'string' && typeof n.at === 'number';
}
