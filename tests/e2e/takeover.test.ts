import { afterEach, expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { startMirror, type Mirror } from '../support/mirror-server';
import { launchWithExtension, makeProfile, request, extensionPage, type Launched, type Profile } from './support/chromium';
import { fileSha256, until, waitForFile } from './support/files';
import { startLinkPage } from './support/link-page';

const MiB = 1024 * 1024;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const undo of cleanup.splice(0).reverse()) await undo();
});

async function setup(): Promise<{ profile: Profile; browser: Launched }> {
  const profile = makeProfile();
  cleanup.push(() => profile.remove());
  const browser = await launchWithExtension(profile);
  cleanup.push(() => browser.close());
  return { profile, browser };
}

test('a link click is taken over from a server resetting every second and saved exactly', async () => {
  const size = 40 * MiB;
  const seed = 41;
  const mirror: Mirror = await startMirror({ size, seed, filename: 'big file.bin', rate: 12 * MiB, faults: { resetAfterMs: 1000 } });
  cleanup.push(() => mirror.close());
  const page = await startLinkPage([{ id: 'big', href: mirror.url, text: 'big file' }]);
  cleanup.push(() => page.close());
  const { profile, browser } = await setup();

  const tab = await browser.context.newPage();
  await tab.goto(page.url);
  await tab.click('#big');

  const saved = await waitForFile(profile.downloads, 'big file.bin', size, 60_000);
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // The browser's own copy was cancelled and erased: the folder holds only Stitch's file.
  const ranged = mirror.stats.requests.filter((r) => r.range && r.range !== 'bytes=0-0');
  expect(ranged.length).toBeGreaterThanOrEqual(2); // resumed after resets
  expect(mirror.stats.requests.some((r) => r.aborted)).toBe(true);

  const ui = await extensionPage(browser, 'offscreen/offscreen.html');
  const list = await until(
    'the job to be saved',
    async () => {
      const reply = await request(ui, { type: 'list-jobs' });
      return reply.value?.jobs[0]?.state === 'saved' ? reply.value.jobs : undefined;
    },
    10_000,
  );
  expect(list).toHaveLength(1);
  expect(list[0]).toMatchObject({ filename: 'big file.bin', size, received: size, url: mirror.url });
});
