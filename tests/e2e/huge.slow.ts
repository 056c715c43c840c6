import { expect, test } from 'vitest';
import { contentSha256 } from '../support/content';
import { extensionPage, request } from './support/chromium';
import { fileSha256, waitForFile } from './support/files';
import { rssOf, sampleMemory } from './support/memory';
import { browserWith, MiB, mirror, profile } from './support/setup';

/**
 * A file past 2^32 bytes (offsets beyond 32 bits in ranges, records and the saved file), with
 * a reset every few seconds so resumes happen at offsets > 4 GiB. Slow: `npm run test:slow`.
 */
test('a file larger than 4 GiB downloads and saves exactly', async () => {
  const size = 4 * 1024 * MiB + 123_457; // an odd tail past 2^32
  const seed = 4242;
  const server = await mirror({ size, seed, filename: 'huge.bin', faults: { resetAfterMs: 5000 } });
  const p = profile();
  const browser = await browserWith(p);
  const ui = await extensionPage(browser, 'offscreen/offscreen.html');
  const memory = sampleMemory(p.dir, 1000);
  const started = performance.now();
  expect((await request(ui, { type: 'add-url', url: server.url })).ok).toBe(true);
  const saved = await waitForFile(p.downloads, 'huge.bin', size, 25 * 60_000);
  const seconds = (performance.now() - started) / 1000;
  const { peak } = memory.stop();
  expect(await fileSha256(saved)).toBe(await contentSha256(seed, size));
  // Ranged requests whose bytes reach past 2^32 (open-ended ones run to the end of the file).
  const past4G = server.stats.requests.filter((r) => {
    const m = /bytes=(\d+)-(\d*)/.exec(r.range ?? '');
    return m !== null && (m[2] === '' ? size : Number(m[2])) >= 2 ** 32 && Number(m[1]) > 0;
  });
  console.log(
    `STITCH HUGE ${JSON.stringify({ bytes: size, seconds: +seconds.toFixed(1), MBps: +(size / 1e6 / seconds).toFixed(1), peakRssMiB: Math.round(peak / MiB), rssAfterMiB: Math.round(rssOf(p.dir) / MiB), rangedRequestsPast4GiB: past4G.length })}`,
  );
});
