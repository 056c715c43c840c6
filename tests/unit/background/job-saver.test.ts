import { expect, test } from 'vitest';
import { asciiFilename } from '../../../src/background/saving/ascii-name';
import { JobSaver } from '../../../src/background/saving/job-saver';
import { FakeBrowser } from '../../support/fake-browser';

function saverOn(browser: FakeBrowser): JobSaver {
  browser.autoComplete = false;
  return new JobSaver(browser, { make: async (id) => `blob:test/${id}`, revoke: async () => {} });
}

const target = { jobId: 'j1', filename: 'file.bin', size: 10, saveAs: false };

test("a save Stitch cancels ends with Stitch's reason, though the browser reports a user's cancel first", async () => {
  const browser = new FakeBrowser();
  const saver = saverOn(browser);
  const { id } = await saver.start(target);
  const end = saver.finished(id);
  await saver.cancel(id, 'SHA-256 is wrong');
  expect(await end).toEqual({ ok: false, error: 'SHA-256 is wrong', byStitch: true });
  expect(browser.calls).toEqual(['download file.bin', `cancel ${id}`, `erase ${id}`]);
});

test('a save the user cancels in the browser says so, and keeps the stored file', async () => {
  const browser = new FakeBrowser();
  const saver = saverOn(browser);
  const { id } = await saver.start(target);
  const end = saver.finished(id);
  browser.finishDownload(id, 'interrupted', 'USER_CANCELED');
  expect(await end).toEqual({ ok: false, error: 'saving was cancelled; the file is still stored, retry to save it', byUser: true });
});

test('a save awaited while Stitch cancels it (the browser already says interrupted, cancel() not yet answered) is Stitch’s', async () => {
  const browser = new FakeBrowser();
  const saver = saverOn(browser);
  const { id } = await saver.start(target);
  let answer = () => {};
  const cancel = browser.downloads.cancel;
  browser.downloads.cancel = async (downloadId) => {
    await cancel(downloadId);
    await new Promise<void>((resolve) => (answer = resolve));
  };
  const cancelled = saver.cancel(id, 'the download stopped');
  const end = await saver.finished(id);
  answer();
  await cancelled;
  expect(end).toEqual({ ok: false, error: 'the download stopped', byStitch: true });
});

test('a name the system cannot write is saved under a safe one, and the name asked is kept to say so', async () => {
  const browser = new FakeBrowser();
  const saver = saverOn(browser);
  const download = browser.downloads.download.bind(browser.downloads);
  // As Chrome in a locale the system lacks: any name outside ASCII is refused.
  browser.downloads.download = async (options) => {
    if (/[^\x20-\x7e]/.test(options.filename ?? '')) throw new Error('Invalid filename');
    return download(options);
  };
  const started = await saver.start({ ...target, filename: 'Überraschung – café.bin' });
  expect(started.renamedFrom).toBe('Überraschung – café.bin');
  expect(browser.calls).toEqual(['download Uberraschung _ cafe.bin']);
  expect(asciiFilename('日本語.mp4')).toBe('download.mp4');
  expect(asciiFilename('plain.iso')).toBe('plain.iso');
});
