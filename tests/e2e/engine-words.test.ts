import type { Locator } from 'playwright-core';
import { expect, test } from 'vitest';
import { extensionPage, request } from './support/chromium';
import { browserWith, closedPort, MiB, mirror, profile } from './support/setup';

/** Fixed words of the engine's English sentences (src/engine/notice.ts, its errors): none may show in a German popup. */
const ENGLISH = /\b(the server|answered|changed|mirror|dropped|ignored|restarted|serves|first difference|resum\w*|asked|retry)\b/i;

test('in a German popup, what the engine tells of servers and mirrors is German, with no English engine phrase', async () => {
  const browser = await browserWith(profile(), 'de');
  const popup = await extensionPage(browser, 'popup.html');
  await popup.setViewportSize({ width: 400, height: 600 });

  // Each primary is slow enough to outlast its mirror's check; each mirror fails it its own way.
  const primary = (seed: number, filename: string) => mirror({ size: 4 * MiB, seed, filename, rate: MiB });
  const busy = await primary(71, 'daten-busy.bin');
  const busyMirror = await mirror({ size: 4 * MiB, seed: 71, faults: { errorStatus: { status: 503, retryAfter: '3600' } } });
  const whole = await primary(72, 'daten-whole.bin');
  const wholeMirror = await mirror({ size: 4 * MiB, seed: 72, faults: { ignoreRanges: true } });
  const other = await primary(73, 'daten-other.bin');
  const otherMirror = await mirror({ size: 4 * MiB, seed: 173 });
  // The file is replaced on the server after its first request: Stitch starts over.
  const changing = await mirror({ size: 4 * MiB, seed: 74, filename: 'daten-changing.bin', rate: MiB, faults: { changeAfterRequests: 1 } });

  const { settings } = (await request(popup, { type: 'get-settings' })).value!;
  const rule = (server: { port: number }, to: { origin: string }) => ({ pattern: `127.0.0.1:${server.port}/`, mirrors: [`${to.origin}/`] });
  const mirrorRules = [rule(busy, busyMirror), rule(whole, wholeMirror), rule(other, otherMirror)];
  expect((await request(popup, { type: 'set-settings', settings: { ...settings, maxConcurrentJobs: 5, mirrorRules } })).ok).toBe(true);
  const add = async (url: string) => (await request(popup, { type: 'add-url', url })).value!.job.id;
  const refusedUrl = `http://127.0.0.1:${await closedPort()}/daten-offline.bin`;
  const ids = {
    busy: await add(busy.url),
    whole: await add(whole.url),
    other: await add(other.url),
    changing: await add(changing.url),
    refused: await add(refusedUrl),
  };

  const row = (id: string): Locator => popup.locator(`[data-job-id="${id}"]`);
  for (const id of Object.values(ids)) await row(id).getByTestId('job-details-toggle').click();
  const says = async (id: string, german: string) => {
    await expect.poll(() => row(id).innerText(), { timeout: 20_000 }).toContain(german);
    const text = await row(id).innerText();
    expect(text, text).not.toMatch(ENGLISH);
  };

  // While its primary runs, the mirror legend's tooltip says why it has the connections it has, in German too.
  const why = async () => ((await row(ids.busy).locator('.segment').first().getAttribute('title')) ?? '').split('\n')[2] ?? '';
  await expect.poll(why, { timeout: 5_000 }).toMatch(/Verbindung/);
  expect(await why()).not.toMatch(ENGLISH);

  await says(
    ids.busy,
    `Stitch verwendet den Spiegelserver 127.0.0.1:${busyMirror.port} nicht mehr. Der Server ist ausgelastet oder wird gewartet (Fehler 503). Er bat, es erst nach 3.600 s erneut zu versuchen.`,
  );
  await says(ids.whole, 'Der Server hat die Anfrage nach einem Teil der Datei übergangen und die ganze Datei geschickt.');
  await says(ids.other, `Er liefert andere Bytes als 127.0.0.1:${other.port} (der erste Unterschied liegt bei Byte`);
  await says(ids.changing, 'Die Datei auf dem Server hat sich geändert (ihr ETag ist neu). Stitch hat den Download von vorn begonnen.');
  await says(ids.refused, 'Stitch konnte den Server nicht erreichen');
}, 60_000);
