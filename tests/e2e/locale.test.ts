import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { horizontalOverflow, seriousViolations } from './support/axe';
import { extensionPage, request } from './support/chromium';
import { browserWith, bypassNext, closedPort, linkPage, MiB, mirror, profile } from './support/setup';

test('in a German browser the popup and the options page speak German and write numbers the German way', async () => {
  const size = 24 * MiB;
  // Slow enough that the row is seen while it downloads.
  const server = await mirror({ size, seed: 41, filename: 'deutsch.iso', rate: 2 * MiB });
  const browser = await browserWith(profile(), 'de');

  const popup = await extensionPage(browser, 'popup.html');
  expect(
    await popup.evaluate(() => (globalThis as unknown as { chrome: { i18n: { getUILanguage(): string } } }).chrome.i18n.getUILanguage()),
  ).toMatch(/^de/);
  expect(await popup.evaluate(() => document.documentElement.lang)).toBe('de');
  await popup.getByTestId('add-url-toggle').click();
  expect(await popup.getByTestId('add-url-submit').textContent()).toBe('Herunterladen');
  await popup.getByTestId('add-url-input').fill(server.url);
  await popup.getByTestId('add-url-submit').click();
  const row = popup.getByTestId('job-row');
  await expect.poll(() => row.getAttribute('data-state'), { timeout: 20_000 }).toBe('running');
  await expect.poll(() => row.getByTestId('job-state').textContent(), { timeout: 10_000 }).toBe('Lädt');
  // "3,5 MB von 24 MB (14 %)": decimal comma, binary MB as in the browser's own list, a space before %.
  await expect
    .poll(() => row.getByTestId('job-size').textContent(), { timeout: 20_000 })
    .toMatch(/^\d+(,\d)? (KB|MB) von 24 MB \(\d+\s%\)$/);
  expect(await row.getByTestId('job-pause').textContent()).toBe('Anhalten');
  // German words are longer: the popup at its real width must still fit them, and stay accessible.
  await popup.setViewportSize({ width: 400, height: 600 });
  expect(await horizontalOverflow(popup)).toEqual([]);
  expect(await seriousViolations(popup, 'light')).toEqual([]);
  await popup.screenshot({ path: resolve(tmpdir(), 'stitch-popup-de.png') });

  const options = await extensionPage(browser, 'options.html');
  expect(await options.title()).toBe('Stitch-Einstellungen');
  expect(await options.locator('h1').textContent()).toBe('Stitch-Einstellungen');
  expect(await options.locator('body').textContent()).toContain('1 MB = 1.048.576 Byte');
  await options.getByTestId('setting-threshold-mb').fill('-5');
  await options.getByTestId('settings-save').click();
  await expect
    .poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 })
    .toBe('Nicht gespeichert: Beheben Sie die oben aufgeführten Probleme.');
  expect(await options.getByTestId('settings-errors').textContent()).toContain(
    'Größenschwelle: Geben Sie eine Zahl in MB von 0 bis 953.674.316 ein.',
  );
});

test('in a German browser, failing servers are told in German only: a missing file, a 503, a refused connection, a reset', async () => {
  const missing = await mirror({ size: MiB, seed: 42, path: '/da.bin' });
  const busy = await mirror({ size: MiB, seed: 43, filename: 'belegt.bin', faults: { errorStatus: { status: 503 } } });
  const reset = await mirror({ size: MiB, seed: 44, filename: 'abgebrochen.bin', faults: { refuse: true } });
  const refused = `http://127.0.0.1:${await closedPort()}/abgelehnt.bin`;
  const browser = await browserWith(profile(), 'de');
  const popup = await extensionPage(browser, 'popup.html');
  const rowOf = async (url: string) => {
    const { job } = (await request(popup, { type: 'add-url', url })).value!;
    return popup.locator(`[data-job-id="${job.id}"]`);
  };

  // A failed download (the 404 fails at once and frees its slot for the three below).
  const gone = await rowOf(new URL('/weg.bin', missing.url).href);
  await expect.poll(() => gone.getAttribute('data-state'), { timeout: 20_000 }).toBe('failed');
  expect(await gone.getByTestId('job-state').textContent()).toBe('Fehlgeschlagen');
  expect(await gone.getByTestId('job-error').textContent()).toBe('Der Server hat diese Datei nicht (Fehler 404).');

  // Downloads that wait to try again: the cause once, in German, the attempt that failed and when Stitch gives up.
  const waiting = (cause: string) =>
    new RegExp(
      `^${cause.replace(/[().]/g, '\\$&')} Versuch [1-7] von 8 ist fehlgeschlagen; Stitch versucht es selbst erneut und gibt nach Versuch 8 auf\\.$`,
    );
  const unreached = 'Stitch konnte den Server nicht erreichen: Die Verbindung wurde abgelehnt oder brach ab, bevor der Server antwortete.';
  const cases = [
    { row: await rowOf(busy.url), cause: 'Der Server ist ausgelastet oder wird gewartet (Fehler 503).' },
    { row: await rowOf(refused), cause: unreached },
    { row: await rowOf(reset.url), cause: unreached },
  ];
  for (const { row, cause } of cases) {
    await expect.poll(() => row.getByTestId('job-state').textContent(), { timeout: 20_000 }).toBe('Neuer Versuch');
    await expect.poll(() => row.getByTestId('job-retrying').textContent(), { timeout: 10_000 }).toMatch(waiting(cause));
  }
  // The row counts the attempts as the background makes them (it said "1 attempt so far" at the sixth).
  await expect
    .poll(() => cases[0]!.row.getByTestId('job-retrying').textContent(), { timeout: 15_000 })
    .toMatch(/Versuch [3-7] von 8 ist fehlgeschlagen/);

  // The background's refusals are German too.
  await popup.getByTestId('add-url-toggle').click();
  await popup.getByTestId('add-url-input').fill('nope');
  await popup.getByTestId('add-url-submit').click();
  await expect
    .poll(() => popup.locator('#add-url-error').textContent(), { timeout: 10_000 })
    .toBe('„nope“ ist keine URL; fügen Sie eine vollständige Adresse ein, die mit http:// oder https:// beginnt.');
});

test('in a German browser the options page refuses garbage in German, and an import error is in KB, not bytes', async () => {
  const browser = await browserWith(profile(), 'de');
  const options = await extensionPage(browser, 'options.html');
  await options.setViewportSize({ width: 900, height: 1400 });
  await expect.poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 }).toBe('');
  await options.getByTestId('setting-excluded-sites').fill('beispiel.de\nnot a host!\n*.foo.com');
  await options.getByTestId('settings-save').click();
  await expect
    .poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 })
    .toBe('Nicht gespeichert: Beheben Sie die oben aufgeführten Probleme.');
  expect(await options.getByTestId('settings-errors').locator('li').allTextContents()).toEqual([
    'Ausgenommene Websites: „not a host!“ ist kein Hostname wie example.com.',
    'Ausgenommene Websites: „*.foo.com“: Schreiben Sie stattdessen foo.com; eine Website umfasst auch ihre Subdomains.',
  ]);
  const { settings } = (await request(options, { type: 'get-settings' })).value!;
  expect(settings.excludedSites).toEqual([]);

  // An imported file with a block size in bytes out of bounds: the bounds in the page's KB, in German.
  await options.getByTestId('settings-import').setInputFiles({
    name: 'alt.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ version: 1, minBlockBytes: 100 })),
  });
  await expect
    .poll(() => options.getByTestId('settings-status').textContent(), { timeout: 10_000 })
    .toBe('Nichts importiert: alt.json enthält Probleme, die oben aufgeführt sind.');
  expect(await options.getByTestId('settings-errors').locator('li').allTextContents()).toEqual([
    'Kleinster Block: Geben Sie für den kleinsten Block eine Zahl in KB von 64 bis 262.144 ein.',
  ]);
});

test('in a German browser a download left to the browser is told in German', async () => {
  const left = await mirror({ size: 24 * MiB, seed: 49, filename: 'links.bin' });
  const page = await linkPage([{ id: 'left', href: left.url, text: 'left' }]);
  const browser = await browserWith(profile(), 'de');
  const popup = await extensionPage(browser, 'popup.html');
  const { tab } = await bypassNext(browser, popup, page);
  await tab.click('#left');
  // The notice's words, then the address it is about.
  await expect
    .poll(() => popup.getByTestId('notice').first().locator('span').allTextContents(), { timeout: 20_000 })
    .toEqual(['Diesen Download wie gewünscht dem Browser überlassen.', left.url]);
});
