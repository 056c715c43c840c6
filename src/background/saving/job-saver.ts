import { asciiFilename } from './ascii-name';
import type { BlobUrlMaker } from './blob-url';
import type { BrowserApi, BrowserDownload, DownloadDelta } from '../browser-api';

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
/**
 * `byUser`: the user cancelled it in the browser; `byStitch`: Stitch did (see cancel); `disk`:
 * the browser said its disk had no room ('full'), or failed a write, which a nearly full disk does ('failed').
 */
export type SaveEnd =
  | { ok: true; filename?: string }
  | { ok: false; error: string; gone?: boolean; byUser?: boolean; byStitch?: boolean; disk?: 'full' | 'failed' };

/** Where the worker's save route answers (see save-route.ts). */
export const SAVE_PATH = '/save/';
/** How long the browser may take to turn a save frame's navigation into a download. */
const CREATED_WITHIN_MS = 15_000;

/**
 * Hands files to the browser's downloads and reports when the browser has written them, which is
 * when stored bytes may go: a finished file as a blob URL (the real filename, `uniquify` on a
 * clash), or in Chrome a streamed save that starts while the job still downloads.
 */
export class JobSaver {
  /** Each download's blob URL or save frame, let go of when it ends. */
  private readonly releases = new Map<number, () => Promise<void>>();
  private readonly waiters = new Map<number, ((end: SaveEnd) => void)[]>();
  /** Downloads Stitch is cancelling, with why: their interruption is Stitch's, not the user's. */
  private readonly cancelling = new Map<number, string>();

  constructor(
    private readonly api: BrowserApi,
    private readonly blobUrls: BlobUrlMaker,
  ) {
    api.downloads.onChanged.addListener((delta) => this.changed(delta));
  }

  /**
   * Starts the browser's download of the stored file; resolves with its downloads id, and the
   * name asked first when the browser could not write it and the file goes under a safe one.
   */
  async start(target: SaveTarget): Promise<{ id: number; renamedFrom?: string }> {
    const url = await this.blobUrls.make(target.jobId, target.size, target.contentType);
    const download = (filename: string) =>
      this.api.downloads.download({ url, filename, conflictAction: 'uniquify', saveAs: target.saveAs });
    try {
      let renamedFrom: string | undefined;
      const id = await download(target.filename).catch((error: unknown) => {
        // A name the system cannot write (Chrome in a locale the system lacks refuses any outside ASCII):
        // a complete download is never failed on its name.
        const safe = asciiFilename(target.filename);
        if (safe === target.filename || !/file ?name/i.test(String(error))) throw error;
        renamedFrom = target.filename;
        return download(safe);
      });
      this.releases.set(id, () => this.blobUrls.revoke(url));
      return { id, ...(renamedFrom !== undefined && { renamedFrom }) };
    } catch (error) {
      await this.blobUrls.revoke(url);
      throw error;
    }
  }

  /** Whether saves can stream while the job downloads (Chrome's worker answers a frame's navigation). */
  get streams(): boolean {
    return this.blobUrls.openFrame !== undefined;
  }

  /**
   * Starts a streamed save: a frame navigates to the job's save URL, which the worker answers
   * with its bytes as they are stored and the browser saves as a download. Resolves with its
   * downloads id. The browser's own settings decide the folder and a clash's " (1)".
   */
  async startStreamed(target: SaveTarget): Promise<number> {
    const frames = this.blobUrls;
    if (!frames.openFrame || !frames.closeFrame) throw new Error('this browser cannot save while downloading');
    // A fresh URL per save: a broken one is never confused with the next.
    const url = `${this.api.extensionOrigin.replace(/\/$/, '')}${SAVE_PATH}${encodeURIComponent(target.jobId)}?at=${Date.now()}`;
    const closeFrame = () => frames.closeFrame?.(url) ?? Promise.resolve();
    const created = this.nextCreated(url);
    try {
      await frames.openFrame(url);
      const id = await created.id;
      this.releases.set(id, closeFrame);
      return id;
    } catch (error) {
      created.stop();
      await closeFrame();
      throw error;
    }
  }

  /** Stops download `id` and erases it (the browser deletes its partial file); its waiters hear `byStitch`. */
  async cancel(id: number, reason: string): Promise<void> {
    // The browser may report the interruption (as USER_CANCELED) before its cancel() answers.
    this.cancelling.set(id, reason);
    try {
      await this.api.downloads.cancel(id).catch(() => {});
      this.settle(id, cancelledByStitch(reason));
      await this.api.downloads.erase(id).catch(() => {});
    } finally {
      this.cancelling.delete(id);
    }
  }

  /** The id of the browser download of `url` once it is created. */
  private nextCreated(url: string): { id: Promise<number>; stop: () => void } {
    let stop = () => {};
    const id = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        stop();
        reject(new Error('the browser did not start saving the file'));
      }, CREATED_WITHIN_MS);
      const listener = (item: BrowserDownload) => {
        if (item.url !== url && item.finalUrl !== url) return;
        stop();
        resolve(item.id);
      };
      stop = () => {
        clearTimeout(timer);
        this.api.downloads.onCreated.removeListener(listener);
      };
      this.api.downloads.onCreated.addListener(listener);
    });
    return { id, stop };
  }

  /** Resolves once the browser finished (or gave up) writing download `id`. */
  async finished(id: number): Promise<SaveEnd> {
    const wait = new Promise<SaveEnd>((resolve) => this.waiters.set(id, [...(this.waiters.get(id) ?? []), resolve]));
    // It may have ended before we started listening (e.g. after a worker restart).
    const item = await this.api.downloads.search(id).catch(() => undefined);
    if (!item) this.settle(id, { ok: false, error: 'the browser no longer knows this download', gone: true });
    else if (item.state === 'complete') this.settle(id, { ok: true, filename: baseName(item.filename) });
    else if (item.state === 'interrupted') this.settle(id, this.interrupted(id, item.error));
    return wait;
  }

  private changed(delta: DownloadDelta): void {
    const state = delta.state?.current;
    if (state === 'complete') void this.completed(delta.id);
    else if (state === 'interrupted') this.settle(delta.id, this.interrupted(delta.id, delta.error?.current));
  }

  private interrupted(id: number, reason: string | undefined): SaveEnd {
    const byStitch = this.cancelling.get(id);
    return byStitch !== undefined ? cancelledByStitch(byStitch) : interrupted(reason);
  }

  /** Written: asks the browser for the name it chose before saying so. */
  private async completed(id: number): Promise<void> {
    const item = await this.api.downloads.search(id).catch(() => undefined);
    this.settle(id, { ok: true, filename: baseName(item?.filename) });
  }

  private settle(id: number, end: SaveEnd): void {
    const release = this.releases.get(id);
    if (release !== undefined) {
      this.releases.delete(id);
      void release();
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

function cancelledByStitch(reason: string): SaveEnd {
  return { ok: false, error: reason, byStitch: true };
}

function interrupted(reason: string | undefined): SaveEnd {
  const disk = reason === 'FILE_NO_SPACE' || reason === 'FILE_TOO_LARGE' ? 'full' : reason === 'FILE_FAILED' ? 'failed' : undefined;
  return { ok: false, error: interruptedMessage(reason), byUser: reason === 'USER_CANCELED' ? true : undefined, ...(disk && { disk }) };
}

function interruptedMessage(reason: string | undefined): string {
  if (reason === 'USER_CANCELED') return 'saving was cancelled; the file is still stored, retry to save it';
  if (reason?.startsWith('FILE_NO_SPACE') || reason === 'FILE_TOO_LARGE') return 'the download folder is full; free space and retry saving';
  return `the browser could not save the file (${reason ?? 'unknown reason'}); retry to save it`;
}
