import { defineConfig } from 'vitest/config';

// Unit files run two at a time (Vitest's default on two cores is one, the cores less one). Integration
// files stay one at a time: their sockets and timers run on the real clock, and beside a second file a
// starved worker once read a block late enough to fetch it again.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], environment: 'node', maxWorkers: 2 } },
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
