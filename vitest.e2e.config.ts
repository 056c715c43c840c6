import { defineConfig } from 'vitest/config';

// End-to-end tests: the built extension in real browsers. One file at a time (2 cores; each
// test drives a whole browser). STITCH_SLOW=1 selects the slow tests (> 4 GiB) instead.
const slow = process.env.STITCH_SLOW === '1';

export default defineConfig({
  test: {
    name: slow ? 'slow' : 'e2e',
    include: slow ? ['tests/e2e/**/*.slow.ts'] : ['tests/e2e/**/*.test.ts'],
    environment: 'node',
    fileParallelism: false,
    testTimeout: slow ? 30 * 60_000 : 180_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
