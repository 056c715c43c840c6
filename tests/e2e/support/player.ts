import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page as PlaywrightPage } from 'playwright-core';
import type { Page as PuppeteerPage } from 'puppeteer-core';

/** The committed test video (scripts/make-video-fixture.sh): 40 s WebM VP8 + Opus, ~8 MB. */
export function videoFixture(name = 'progressive.webm'): { bytes: Uint8Array; sha256: string; durationSeconds: number } {
  const bytes = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../fixtures', name)));
  return { bytes, sha256: createHash('sha256').update(bytes).digest('hex'), durationSeconds: 40 };
}

/** A page in Chromium (Playwright) or Firefox (puppeteer): both run `evaluate(fn, arg)` alike. */
export type AnyPage = PlaywrightPage | PuppeteerPage;

/**
 * Runs `fn(arg)` in the page. Sent as source text with a no-op `__name`: tsx (the benchmarks'
 * loader) compiles with esbuild's keepNames, which wraps named inner functions in calls to a
 * helper that exists only in Node.
 */
function evaluate<A, R>(page: AnyPage, fn: (arg: A) => Promise<R>, arg: A): Promise<R> {
  const source = `(() => { const __name = (f) => f; return (${fn.toString()})(${JSON.stringify(arg)}); })()`;
  return (page as PlaywrightPage).evaluate<R>(source);
}

/**
 * ms from the page's navigation to its first frame shown: the player page marks it
 * (`stitch:first-frame`), as does the benchmark's reference page.
 */
export async function firstFrameMs(page: AnyPage, timeoutMs: number): Promise<number> {
  return evaluate(
    page,
    (timeoutMs) =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        const check = () => {
          const mark = performance.getEntriesByName('stitch:first-frame')[0];
          if (mark && (document.querySelector('video')?.currentTime ?? 0) > 0) return resolve(mark.startTime);
          if (performance.now() - t0 > timeoutMs) return reject(new Error(`no first frame after ${timeoutMs} ms`));
          setTimeout(check, 50);
        };
        check();
      }),
    timeoutMs,
  );
}

/**
 * Seeks the player to `fraction` of the duration and resolves with the ms until it plays again
 * from there (currentTime moved 0.2 s past the target while not seeking).
 */
export async function seekAndTime(page: AnyPage, fraction: number, timeoutMs: number): Promise<{ ms: number; target: number }> {
  return seeksAndTime(page, [fraction], 0, timeoutMs);
}

/**
 * Seeks to each fraction of the duration in turn, `gapMs` apart (a person dragging the
 * slider), and resolves with the ms from the last seek until it plays from the last target.
 * `durationSeconds`: the file's true duration, where the element's may be short of it (Firefox
 * gives a fragmented MP4 with no total the length of the fragments it has read); by default the
 * element's.
 */
export async function seeksAndTime(
  page: AnyPage,
  fractions: number[],
  gapMs: number,
  timeoutMs: number,
  durationSeconds?: number,
): Promise<{ ms: number; target: number }> {
  return evaluate(
    page,
    ({ fractions, gapMs, timeoutMs, durationSeconds }) =>
      new Promise<{ ms: number; target: number }>((resolve, reject) => {
        const video = document.querySelector('video')!;
        const duration = durationSeconds ?? video.duration;
        const target = duration * fractions[fractions.length - 1]!;
        let t0 = 0;
        const check = () => {
          if (t0 > 0 && !video.seeking && video.currentTime > target + 0.2 && video.currentTime < target + 5) {
            clearTimeout(timer);
            video.removeEventListener('timeupdate', check);
            resolve({ ms: performance.now() - t0, target });
          }
        };
        const timer = setTimeout(
          () => {
            video.removeEventListener('timeupdate', check);
            reject(
              new Error(
                `no playback at ${target} s after ${timeoutMs} ms (currentTime ${video.currentTime}, the element's duration ${video.duration} s)`,
              ),
            );
          },
          timeoutMs + gapMs * fractions.length,
        );
        video.addEventListener('timeupdate', check);
        fractions.forEach((fraction, i) =>
          setTimeout(() => {
            if (i === fractions.length - 1) t0 = performance.now();
            video.currentTime = duration * fraction;
            void video.play().catch(() => {});
          }, i * gapMs),
        );
      }),
    { fractions, gapMs, timeoutMs, durationSeconds },
  );
}

/** Resolves once the element has played to `seconds` (or past it). */
export async function playedTo(page: AnyPage, seconds: number, timeoutMs: number): Promise<void> {
  return evaluate(
    page,
    ({ seconds, timeoutMs }) =>
      new Promise<void>((resolve, reject) => {
        const video = document.querySelector('video')!;
        const t0 = performance.now();
        const check = () => {
          if (video.currentTime >= seconds) return resolve();
          if (performance.now() - t0 > timeoutMs)
            return reject(new Error(`not at ${seconds} s after ${timeoutMs} ms (currentTime ${video.currentTime})`));
          setTimeout(check, 50);
        };
        check();
      }),
    { seconds, timeoutMs },
  );
}

/**
 * A seek before the player knows much (issue 26): seeks to `fraction` of the duration as soon as
 * the element knows a duration (the user's first chance to click the bar; before a WebM's Cues
 * at the end are read), and resolves with when that was (ms since the page's navigation) and the
 * ms from it until the element plays from the target. `durationSeconds`: as for `seeksAndTime`.
 */
export async function earlySeekAndTime(
  page: AnyPage,
  fraction: number,
  timeoutMs: number,
  durationSeconds?: number,
): Promise<{ at: number; ms: number; target: number }> {
  return evaluate(
    page,
    ({ fraction, timeoutMs, durationSeconds }) =>
      new Promise<{ at: number; ms: number; target: number }>((resolve, reject) => {
        const video = document.querySelector('video')!;
        let t0 = 0;
        let target = 0;
        const seek = () => {
          if (t0 > 0 || !Number.isFinite(video.duration) || video.duration <= 0) return;
          target = (durationSeconds ?? video.duration) * fraction;
          t0 = performance.now();
          video.currentTime = target;
          void video.play().catch(() => {});
        };
        const check = () => {
          if (t0 > 0 && !video.seeking && video.currentTime > target + 0.2 && video.currentTime < target + 5) {
            clearTimeout(timer);
            video.removeEventListener('timeupdate', check);
            resolve({ at: t0, ms: performance.now() - t0, target });
          }
        };
        const timer = setTimeout(() => {
          video.removeEventListener('timeupdate', check);
          reject(
            new Error(
              `no playback at ${target} s after ${timeoutMs} ms (currentTime ${video.currentTime}, the element's duration ${video.duration} s, seek at ${Math.round(t0)} ms)`,
            ),
          );
        }, timeoutMs);
        video.addEventListener('durationchange', seek);
        video.addEventListener('timeupdate', check);
        seek();
      }),
    { fraction, timeoutMs, durationSeconds },
  );
}
