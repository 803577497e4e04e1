import { defineConfig } from 'vitest/config';

// Two projects so the quick suite stays quick: unit tests sit beside the code,
// end-to-end and multi-process tests live under test/.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{lib,gateway,core,workers,proto,bench}/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
