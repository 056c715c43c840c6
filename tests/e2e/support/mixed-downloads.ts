/**
 * The popup as a person sees it after a busy day: 25 downloads from loopback servers in every
 * state a row can be in (running, retrying, queued, paused, failed for different reasons, saved,
 * cancelled and still undoable), at 400 px, in the browser language asked for.
 */
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { JobView } from '../../../src/messages';
import type { Faults } from '../../support/mirror-server';
import { extensionPage, request, type Launched } from './chromium';
import { browserWith, MiB, mirror, profile } from './setup';

export interface MixedDownloads {
  browser: Launched;
  popup: Page;
  /** Job ids by the state they were brought to (the cancelled ones once `cancel` has run). */
  ids: Record<'saved' | 'failed' | 'paused' | 'retrying' | 'running' | 'queued' | 'cancelled', string[]>;
  /** The file name each job's row should show, by job id: every one different. */
  names: Map<string, string>;
  /** Cancels two queued downloads; their rows offer Undo for 10 s, then go. */
  cancel: () => Promise<void>;
}

/** Big and slow enough to stay unfinished for the whole test. */
const UNFINISHED = { size: 512 * MiB, rate: MiB };

export async function popupWithMixedDownloads(language?: string): Promise<MixedDownloads> {
  const browser = await browserWith(profile(), language);
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });
  const { settings } = (await request(popup, { type: 'get-settings' })).value!;
  // Three running beside the one that keeps retrying, so the queue still has a turn to wait for.
  expect((await request(popup, { type: 'set-settings', settings: { ...settings, maxConcurrentJobs: 4 } })).ok).toBe(true);

  let seed = 60;
  const names = new Map<string, string>();
  const named = (id: string, name: string) => (names.set(id, name), id);
  // Each server has the file under its own name, so a row that never got an answer (queued,
  // failed, retrying) is still named from its URL's last segment, as a person would know it.
  const add = async (
    filename: string,
    { missing = false, ...options }: { size?: number; rate?: number; faults?: Faults; missing?: boolean } = {},
  ) => {
    const path = `/files/${filename}`;
    const server = await mirror({ size: 2 * MiB, seed: seed++, filename, ...options, path: missing ? `${path}.old` : path });
    const url = new URL(path, server.url).href; // a missing file: the server has only the `.old` one
    return named((await request(popup, { type: 'add-url', url })).value!.job.id, filename);
  };
  /** Retrying and cancelled (undoable) are marks on a row of another state. */
  const reach = async (ids: string[], state: JobView['state'] | 'retrying' | 'undo') => {
    for (const id of ids) {
      const row = popup.locator(`[data-job-id="${id}"]`);
      const mark = state === 'retrying' || state === 'undo' ? `data-${state}` : undefined;
      const reached = async () => (mark ? row.getAttribute(mark) : row.getAttribute('data-state'));
      await expect.poll(reached, { timeout: 30_000 }).toBe(mark ? '' : state);
    }
  };
  const act = async (ids: string[], action: 'pause' | 'cancel') => {
    for (const id of ids) expect((await request(popup, { type: 'job-action', action, id })).ok).toBe(true);
  };

  const ids: MixedDownloads['ids'] = {
    saved: [],
    failed: [],
    paused: [],
    retrying: [],
    running: [],
    queued: [],
    cancelled: [],
  };
  for (const name of [
    'invoice-2024-11.pdf',
    'holiday-photos.zip',
    'podcast-episode-112.mp3',
    'font-pack.tar.gz',
    'dataset-sample.csv',
    'slides-final-v2.pptx',
  ])
    ids.saved.push(await add(name));
  await reach(ids.saved, 'saved');
  ids.failed.push(
    await add('missing-report.pdf', { missing: true }),
    await add('members-only.mkv', { faults: { errorStatus: { status: 403 } } }),
    await add('bad-request.bin', { faults: { errorStatus: { status: 400 } } }),
  );
  await reach(ids.failed, 'failed');
  for (const name of ['debian-12.8.0-amd64-DVD-1.iso', 'lecture-07-recording.mp4', 'game-assets-v3.pak', 'android-studio-linux.tar.gz'])
    ids.paused.push(await add(name, UNFINISHED));
  await act(ids.paused, 'pause');
  await reach(ids.paused, 'paused');
  // Servers that ask to come back in four minutes keep their rows retrying for the whole test, however
  // slow the machine (a refused connection is given up after about a minute of retries), and their
  // rows say at what time Stitch tries again (it does for a wait of a minute or more).
  const later = (status: number) => ({ ...UNFINISHED, faults: { errorStatus: { status, retryAfter: '240' } } });
  ids.retrying.push(await add('busy-mirror.iso', later(503)), await add('rate-limited-backup.tar', later(429)));
  for (const name of ['ubuntu-24.04.1-desktop-amd64.iso', 'Fedora-Workstation-Live-41.iso']) ids.running.push(await add(name, UNFINISHED));
  await reach(ids.retrying, 'retrying');
  await reach(ids.running, 'running');
  for (const name of [
    'blender-4.3-linux-x64.tar.xz',
    'conference-keynote.webm',
    'map-tiles-europe.mbtiles',
    'kernel-source-6.12.tar.xz',
    'audiobook-part-1.m4b',
    'backup-2024-12-01.img',
  ])
    ids.queued.push(await add(name, UNFINISHED));
  await reach(ids.queued, 'queued');
  ids.cancelled.push(await add('wrong-version.dmg', UNFINISHED), await add('duplicate-download.zip', UNFINISHED));
  await reach(ids.cancelled, 'queued');
  await expect.poll(() => popup.getByTestId('job-row').count(), { timeout: 10_000 }).toBe(25);
  const cancel = async () => {
    await act(ids.cancelled, 'cancel');
    await reach(ids.cancelled, 'undo');
  };
  return { browser, popup, ids, names, cancel };
}

/** The whole list unclipped (the real popup scrolls it), for a picture of all 25 rows at once. */
export async function screenshotWholeList(popup: Page, path: string): Promise<void> {
  await popup.addStyleTag({ content: 'body { max-height: none !important; }' });
  await popup.screenshot({ path, fullPage: true });
}
