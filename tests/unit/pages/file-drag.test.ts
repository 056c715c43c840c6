// @vitest-environment happy-dom
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JobView } from '../../../src/messages';
import { fileUrl } from '../../../src/popup/file-drag';
import { JobRow, type RowControls } from '../../../src/popup/job-row';
import { jobView, speak } from './fixtures';

afterEach(() => {
  delete (globalThis as { chrome?: unknown }).chrome;
});

describe('fileUrl', () => {
  it.each(['/home/me/Downloads/shown (1).bin', '/tmp/a#b?c%d é.bin', '/srv/100% done.iso'])('%s as Node writes it', (path) => {
    expect(fileUrl(path)).toBe(pathToFileURL(path).href);
  });

  it('writes Windows paths with the drive, and network shares with the server as host', () => {
    expect(fileUrl('C:\\Users\\me\\Downloads\\a b#1.iso')).toBe('file:///C:/Users/me/Downloads/a%20b%231.iso');
    expect(fileUrl('\\\\nas\\media\\film.mkv')).toBe('file://nas/media/film.mkv');
  });
});

/** A dragstart as the browser fires it on the row, with a drag data store of its own. */
function dragStart(row: JobRow): { event: DragEvent; data: DataTransfer } {
  const data = new DataTransfer();
  const event = new DragEvent('dragstart', { bubbles: true, cancelable: true });
  Object.defineProperty(event, 'dataTransfer', { value: data });
  row.element.dispatchEvent(event);
  return { event, data };
}

function rowWith(job: JobView, savedPath: RowControls['savedPath']): JobRow {
  return new JobRow(job, () => {}, undefined, undefined, undefined, {
    move() {},
    setSpeedLimit() {},
    aria2Available: () => false,
    savedPath,
  });
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('dragging a saved file out of the list', () => {
  const saved = jobView({ state: 'saved', received: 100_000_000, savedDownloadId: 7, filename: 'shown (1).bin' });

  it('carries the saved file as its file:// URL, with a tooltip in the user language', async () => {
    speak('de');
    const savedPath = vi.fn(async () => '/home/me/Downloads/shown (1).bin');
    const row = rowWith(saved, savedPath);
    await settled();
    expect(savedPath).toHaveBeenCalledWith(saved);
    expect(row.element.getAttribute('draggable')).toBe('true');
    expect(row.element.title).toBe('In einen Ordner oder ein anderes Programm ziehen, um die Datei zu kopieren');
    const { event, data } = dragStart(row);
    expect(event.defaultPrevented).toBe(false);
    expect(data.getData('text/uri-list')).toBe('file:///home/me/Downloads/shown%20(1).bin');
    expect(data.effectAllowed).toBe('copy');
  });

  it('hands the drag to Chrome’s downloads.drag where it exists, without asking for the path', async () => {
    const drag = vi.fn();
    (globalThis as { chrome?: unknown }).chrome = { downloads: { drag } };
    const savedPath = vi.fn(async () => '/d/x.bin');
    const row = rowWith(saved, savedPath);
    expect(row.element.getAttribute('draggable')).toBe('true');
    const { event, data } = dragStart(row);
    expect(drag).toHaveBeenCalledWith(7);
    expect(event.defaultPrevented).toBe(true);
    expect(data.types).toEqual([]);
    await settled();
    expect(savedPath).not.toHaveBeenCalled();
  });

  it('is not offered before the file is saved, nor when the file is gone from disk', async () => {
    const savedPath = vi.fn(async (): Promise<string | undefined> => undefined);
    const running = rowWith(jobView(), savedPath);
    const gone = rowWith(saved, savedPath);
    await settled();
    expect(savedPath).toHaveBeenCalledTimes(1);
    for (const row of [running, gone]) {
      expect(row.element.hasAttribute('draggable')).toBe(false);
      expect(row.element.hasAttribute('title')).toBe(false);
      expect(dragStart(row).event.defaultPrevented).toBe(false);
    }
  });

  it('asks once per saved download, and stops offering the file when the row leaves the saved state', async () => {
    const savedPath = vi.fn(async () => '/d/x.bin');
    const row = rowWith(saved, savedPath);
    await settled();
    row.update({ ...saved, updatedAt: 3_000 });
    await settled();
    expect(savedPath).toHaveBeenCalledTimes(1);
    row.update({ ...saved, state: 'cancelled', undoUntil: 10_000 });
    expect(row.element.hasAttribute('draggable')).toBe(false);
    expect(dragStart(row).data.types).toEqual([]);
  });
});
