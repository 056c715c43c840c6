/**
 * Dragging a saved file out of the list, onto the desktop, a folder or another app. Chrome's
 * `downloads.drag` hands the browser's own file to the platform; where it is missing (Debian's
 * Chromium 156, Firefox) the drag carries the file's `file://` URL as `text/uri-list`, which file
 * managers and mail programs take as the file itself. Chrome's `DownloadURL` format is left out:
 * Chromium reads it only on Windows and macOS, where `downloads.drag` exists.
 */
import type { JobView } from '../messages';
import { t } from '../words/i18n';

/** Where the browser saved a download (downloads.search's `filename`), or undefined when the file is gone. */
export type SavedPathLookup = (job: JobView) => Promise<string | undefined>;

type BrowserDrag = (downloadId: number) => void;

/** Chrome's downloads.drag, where the browser has it. */
function browserDrag(): BrowserDrag | undefined {
  const drag = (globalThis as { chrome?: { downloads?: { drag?: unknown } } }).chrome?.downloads?.drag;
  return typeof drag === 'function' ? (drag as BrowserDrag) : undefined;
}

/** The `file://` URL of an absolute path as the browser reports it: POSIX, or Windows (`C:\…`, `\\server\share\…`). */
export function fileUrl(path: string): string {
  const unc = /^\\\\([^\\]+)(\\.*)$/.exec(path);
  if (unc) return `file://${unc[1]}${encodePath(unc[2]!.replaceAll('\\', '/'))}`;
  const windows = /^[A-Za-z]:[\\/]/.test(path);
  const slashed = windows ? `/${path.replaceAll('\\', '/')}` : path;
  return `file://${encodePath(slashed)}`;
}

/** Each segment percent-encoded ("#", "?", "%" and spaces are part of a name, not of the URL), a drive's colon kept. */
function encodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => (/^[A-Za-z]:$/.test(segment) ? segment : encodeURIComponent(segment)))
    .join('/');
}

/**
 * Makes a row draggable while it is a saved file the drag can carry: at once with downloads.drag,
 * else once the background told where the file is (a drag's data must be set during dragstart,
 * too soon to ask then).
 */
export class FileDrag {
  /** The saved download the row stands for, while it is one. */
  private downloadId: number | undefined;
  /** What a drag carries now; undefined while there is nothing to carry (not saved, not found, not yet told). */
  private carried: { downloadId: number; path?: string } | undefined;

  constructor(
    private readonly element: HTMLElement,
    private readonly lookup: SavedPathLookup | undefined,
    private readonly drag = browserDrag(),
  ) {
    element.addEventListener('dragstart', (event) => this.start(event));
  }

  update(job: JobView): void {
    const id = job.state === 'saved' ? job.savedDownloadId : undefined;
    if (id === this.downloadId) return;
    this.downloadId = id;
    this.carry(id !== undefined && this.drag ? { downloadId: id } : undefined);
    if (id === undefined || this.drag || !this.lookup) return;
    void this.lookup(job).then(
      (path) => {
        if (this.downloadId === id && path !== undefined) this.carry({ downloadId: id, path });
      },
      // Not found or not asked: the row is not dragged; Open and Show in folder still say why.
      () => undefined,
    );
  }

  private carry(carried: FileDrag['carried']): void {
    this.carried = carried;
    if (carried) {
      this.element.setAttribute('draggable', 'true');
      this.element.title = t('dragHint');
    } else {
      this.element.removeAttribute('draggable');
      this.element.removeAttribute('title');
    }
  }

  private start(event: DragEvent): void {
    const carried = this.carried;
    if (!carried) return;
    if (this.drag) {
      // The browser drags the file itself; the page's own drag would compete with it.
      event.preventDefault();
      return this.drag(carried.downloadId);
    }
    if (carried.path === undefined || !event.dataTransfer) return;
    event.dataTransfer.effectAllowed = 'copy';
    event.dataTransfer.setData('text/uri-list', fileUrl(carried.path));
  }
}
