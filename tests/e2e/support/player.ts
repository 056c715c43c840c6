import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';

/** The committed test video (scripts/make-video-fixture.sh): 40 s WebM VP8 + Opus, ~8 MB. */
export function videoFixture(name = 'progressive.webm'): { bytes: Uint8Array; sha256: string; durationSeconds: number } {
  const bytes = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../fixtures', name)));
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex'), durationSeconds: 40 };
}

/** ms from the player page's navigation to its first frame shown (the page marks it). */
export async function firstFrameMs(page: Page, timeoutMs: number): Promise<number> {
  await page.waitForFunction(
    () => performance.getEntriesByName('stitch:first-frame').length > 0 && document.querySelector('video')!.currentTime > 0,
    undefined,
    { timeout: timeoutMs, polling: 50 },
  );
  return page.evaluate(() => performance.getEntriesByName('stitch:first-frame')[0]!.startTime);
}

/**
 * Seeks the player to `fraction` of the duration and resolves with the ms until it plays again
 * from there (currentTime moved 0.2 s past the target while not seeking).
 */
export async function seekAndTime(page: Page, fraction: number, timeoutMs: number): Promise<{ ms: number; target: number }> {
  return page.evaluate(
    ({ fraction, timeoutMs }) =>
      new Promise<{ ms: number; target: number }>((resolve, reject) => {
        const video = document.querySelector('video')!;
        const target = video.duration * fraction;
        const t0 = performance.now();
        const timer = setTimeout(() => reject(new Error(`no playback at ${target} s after ${timeoutMs} ms (currentTime ${video.currentTime})`)), timeoutMs);
        const check = () => {
          if (!video.seeking && video.currentTime > target + 0.2 && video.currentTime < target + 5) {
            clearTimeout(timer);
            video.removeEventListener('timeupdate', check);
            resolve({ ms: performance.now() - t0, target });
          }
        };
        video.addEventListener('timeupdate', check);
        video.currentTime = target;
        void video.play().catch(() => {});
      }),
    { fraction, timeoutMs },
  );
}
