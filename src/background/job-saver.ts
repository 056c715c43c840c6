import type { BlobUrlMaker } from './blob-url';
import type { BrowserApi, DownloadDelta } from './browser-api';

export interface SaveTarget {
  jobId: string;
  filename: string;
  size: number;
  contentType?: string;
  saveAs: boolean;
}

/**
 * `filename`: the name the browser wrote (it may differ, e.g. "file (1).bin" on a clash).
 * `gone`: the browser has no such download (erased, or lost across a restart).
 */
export type SaveEnd = { ok: true; filename?: string } | { ok: false; error: string; gone?: boolean };

/**
 * Hands finished files to the browser's downloads (blob URL, the real filename, `uniquify` on a
 * clash) and reports when the browser has written them, which is when stored bytes may go.
 */
export class JobSaver {
  private readonly urls = new Map<number, string>();
  private readonly waiters = new Map<number, ((end: SaveEnd) => void)[]>();

  constructor(
    private readonly api: BrowserApi,
    private readonly blobUrls: BlobUrlMaker,
  ) {
    api.downloads.onChanged.addListener((delta) => this.changed(delta));
  }

  /** Starts the browser's download of the stored file; resolves with its downloads id. */
  async start(target: SaveTarget): Promise<number> {
    const url = await this.blobUrls.make(target.jobId, target.size, target.contentType);
    try {
      const id = await this.api.downloads.download({
        url,
        filename: target.filename,
        conflictAction: 'uniquify',
        saveAs: target.saveAs,
      });
      this.urls.set(id, url);
      return id;
    } catch (error) {
      await this.blobUrls.revoke(url);
      throw error;
    }
  }

  /** Resolves once the browser finished (or gave up) writing download `id`. */
  async finished(id: number): Promise<SaveEnd> {
    const wait = new Promise<SaveEnd>((resolve) => this.waiters.set(id, [...(this.waiters.get(id) ?? []), resolve]));
    // It may have ended before we started listening (e.g. after a worker restart).
    const item = await this.api.downloads.search(id).catch(() => undefined);
    if (!item) this.settle(id, { ok: false, error: 'the browser no longer knows this download', gone: true });
    else if (item.state === 'complete') this.settle(id, { ok: true, filename: baseName(item.filename) });
    else if (item.state === 'interrupted') this.settle(id, { ok: false, error: interruptedMessage(item.error) });
    return wait;
  }

  private changed(delta: DownloadDelta): void {
    const state = delta.state?.current;
    if (state === 'complete') void this.completed(delta.id);
    else if (state === 'interrupted') this.settle(delta.id, { ok: false, error: interruptedMessage(delta.error?.current) });
  }

  /** Written: asks the browser for the name it chose before saying so. */
  private async completed(id: number): Promise<void> {
    const item = await this.api.downloads.search(id).catch(() => undefined);
    this.settle(id, { ok: true, filename: baseName(item?.filename) });
  }

  private settle(id: number, end: SaveEnd): void {
    const url = this.urls.get(id);
    if (url !== undefined) {
      this.urls.delete(id);
      void this.blobUrls.revoke(url);
    }
    const waiters = this.waiters.get(id) ?? [];
    this.waiters.delete(id);
    for (const resolve of waiters) resolve(end);
  }
}

/** The last part of a path the browser reports (either separator: Windows or not). */
function baseName(path: string | undefined): string | undefined {
  const name = path?.split(/[\\/]/).pop();
  return name === '' ? undefined : name;
}

function interruptedMessage(reason: string | undefined): string {
  if (reason === 'USER_CANCELED') return 'saving was cancelled; the file is still stored, retry to save it';
  if (reason?.startsWith('FILE_NO_SPACE') || reason === 'FILE_TOO_LARGE') return 'the download folder is full; free space and retry saving';
  return `the browser could not save the file (${reason ?? 'unknown reason'}); retry to save it`;
}
