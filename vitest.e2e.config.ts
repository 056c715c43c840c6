import { defineConfig } from 'vitest/config';

// End-to-end tests: the built extension in real browsers. STITCH_SLOW=1 selects the slow tests (> 4 GiB) instead.
//
// Most of an end-to-end test is waiting (throttled loopback servers, timers, Chrome's alarms): a whole run,
// one file at a time, kept one of the two cores busy about half of its time. So most files run two at a
// time, each with its own browser, profile, download folder and servers on ports the system picks. The
// files whose assertions compare times or rates the browser reaches run afterwards, one at a time with
// nothing beside them: a seek against the browser's own <video> (or hls.js) or within a few seconds, the throughput
// floor, the start probe's measurement deciding whether Stitch takes a download over, a speed limit's
// bytes per second, the player's message read right after a 'waiting' event. Beside another browser
// those failed or came close to their bounds (Chromium's seek in player-users-files is within 1 s of
// its bound even alone).
const slow = process.env.STITCH_SLOW === '1';

/** Files whose figures need the machine to themselves (see above). */
const ALONE = [
  'tests/e2e/player-users-files.test.ts',
  'tests/e2e/player.test.ts',
  'tests/e2e/player-seek.test.ts',
  'tests/e2e/player-controls.test.ts',
  'tests/e2e/throughput.test.ts',
  'tests/e2e/takeover.test.ts',
  'tests/e2e/start-probe.test.ts',
  'tests/e2e/speed-limit.test.ts',
  'tests/e2e/stream-player.test.ts',
  // The row must say "stalled" within 5 s of a silence (3 s seen alone).
  'tests/e2e/stall-numbers.test.ts',
];

const common = {
  environment: 'node',
  testTimeout: slow ? 30 * 60_000 : 180_000,
  hookTimeout: 60_000,
} as const;

export default defineConfig({
  test: {
    reporters: ['default'],
    projects: slow
      ? [{ test: { ...common, name: 'slow', include: ['tests/e2e/**/*.slow.ts'], fileParallelism: false } }]
      : [
          // Two at a time first, then the files that must run alone (sequence.groupOrder runs the groups in turn).
          {
            test: {
              ...common,
              name: 'e2e',
              include: ['tests/e2e/**/*.test.ts'],
              exclude: ALONE,
              maxWorkers: 2,
              sequence: { groupOrder: 0 },
            },
          },
          {
            test: {
              ...common,
              name: 'e2e-alone',
              include: ALONE,
              maxWorkers: 1,
              sequence: { groupOrder: 1 },
              // The seek tests' clips, made with ffmpeg while the first group runs (on a fresh checkout).
              globalSetup: ['tests/e2e/support/make-clips.ts'],
            },
          },
        ],
  },
});
