import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { horizontalOverflow, seriousViolations } from './support/axe';
import { extensionPage, request } from './support/chromium';
import { type MixedDownloads, popupWithMixedDownloads, screenshotWholeList } from './support/mixed-downloads';
import { browserWith, MiB, mirror, profile } from './support/setup';

const DOCS = resolve(import.meta.dirname, '../../docs');

type Shown = keyof MixedDownloads['ids'];
/**
 * What a person reads on a row in each state: its badge, and its one action where it has one; and
 * on a retrying row, the words before the time its server asked Stitch to come back at.
 */
const WORDS: Record<
  string,
  { dir: 'ltr' | 'rtl'; states: Record<Shown, string>; actions: Partial<Record<Shown, string>>; triesAgainAt: string }
> = {
  en: {
    dir: 'ltr',
    states: {
      saved: 'Saved',
      failed: 'Failed',
      paused: 'Paused',
      retrying: 'Retrying',
      running: 'Downloading',
      queued: 'Queued',
      cancelled: 'Cancelled',
    },
    actions: { saved: 'Open', failed: 'Retry', paused: 'Resume', running: 'Pause', cancelled: 'Undo' },
    triesAgainAt: 'Stitch tries again at ',
  },
  de: {
    dir: 'ltr',
    states: {
      saved: 'Gespeichert',
      failed: 'Fehlgeschlagen',
      paused: 'Angehalten',
      retrying: 'Neuer Versuch',
      running: 'Lädt',
      queued: 'Wartet',
      cancelled: 'Abgebrochen',
    },
    actions: { saved: 'Öffnen', failed: 'Erneut versuchen', paused: 'Fortsetzen', running: 'Anhalten', cancelled: 'Rückgängig' },
    triesAgainAt: 'Stitch versucht es um ',
  },
  fa: {
    dir: 'rtl',
    states: {
      saved: 'ذخیره شد',
      failed: 'ناموفق',
      paused: 'متوقف',
      retrying: 'تلاش دوباره',
      running: 'در حال دانلود',
      queued: 'در صف',
      cancelled: 'لغو شد',
    },
    actions: { saved: 'باز کردن', failed: 'تلاش دوباره', paused: 'ادامه', running: 'توقف', cancelled: 'واگرد' },
    triesAgainAt: 'Stitch ساعت ',
  },
};

for (const [language, words] of Object.entries(WORDS)) {
  test(`25 downloads in mixed states in a ${language} browser: every row in its words, laid out ${words.dir}, nothing sideways, axe clean`, async () => {
    const { popup, ids, names, cancel } = await popupWithMixedDownloads(language);
    expect(await popup.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual([language, words.dir]);
    const rowSays = async (shown: Shown) => {
      for (const id of ids[shown]) {
        const row = popup.locator(`[data-job-id="${id}"]`);
        expect(await row.getByTestId('job-filename').textContent(), `${shown} row's name`).toBe(names.get(id));
        expect(await row.getByTestId('job-state').textContent(), `${shown} row`).toBe(words.states[shown]);
        if (shown === 'retrying')
          expect(await row.getByTestId('job-retrying').textContent(), 'when it tries again').toContain(words.triesAgainAt);
        const action = words.actions[shown];
        if (action) expect(await row.locator('.primary-action button').textContent(), `${shown} row's action`).toBe(action);
        // The name starts the line on the side the language reads from, the state follows it.
        const [name, badge] = await Promise.all([
          row.getByTestId('job-details-toggle').boundingBox(),
          row.getByTestId('job-state').boundingBox(),
        ]);
        if (words.dir === 'rtl') expect(name!.x, `${shown} row's name`).toBeGreaterThan(badge!.x);
        else expect(name!.x, `${shown} row's name`).toBeLessThan(badge!.x);
      }
    };

    expect(new Set(names.values()).size, 'every row named differently').toBe(25);
    // Cancelled rows last 10 s: they are read and pictured first.
    await cancel();
    await rowSays('cancelled');
    await screenshotWholeList(popup, resolve(DOCS, `popup-${language}.png`));
    for (const shown of Object.keys(ids) as Shown[]) if (shown !== 'cancelled') await rowSays(shown);
    for (const scheme of ['light', 'dark'] as const) {
      expect(await horizontalOverflow(popup), scheme).toEqual([]);
      expect(await seriousViolations(popup, scheme), scheme).toEqual([]);
    }
  });
}

test('in a Persian browser the options page and the player are right to left too, at 400 px, axe clean', async () => {
  const server = await mirror({ size: 64 * MiB, seed: 59, filename: 'lecture.webm', contentType: 'video/webm', rate: MiB });
  const browser = await browserWith(profile(), 'fa');
  const options = await extensionPage(browser, 'options.html');
  const { job } = (await request(options, { type: 'add-url', url: server.url })).value!;
  for (const path of ['options.html', `player.html?id=${job.id}`]) {
    const page = await extensionPage(browser, path);
    await page.setViewportSize({ width: 400, height: 800 });
    await expect.poll(() => page.evaluate(() => document.documentElement.dir), { timeout: 10_000 }).toBe('rtl');
    expect(await page.evaluate(() => document.documentElement.lang), path).toBe('fa');
    for (const scheme of ['light', 'dark'] as const) {
      expect(await horizontalOverflow(page), `${path} ${scheme}`).toEqual([]);
      expect(await seriousViolations(page, scheme), `${path} ${scheme}`).toEqual([]);
    }
  }
});
