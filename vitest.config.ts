import { defineConfig } from 'vitest/config';

// One file at a time in both rings. `npm test` runs lint beside the unit files (scripts/test.mjs) and the
// integration files alone: some of each use real sockets and timers, and with more beside them (two unit
// files and lint; two integration files and lint; one integration file and lint) a starved worker
// missed a bound: five connections seen as four, a block fetched twice, a reset counted late.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], environment: 'node', maxWorkers: 1 } },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.ts'],
          environment: 'node',
          maxWorkers: 1,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
