import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/globalSetup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at a time on two cores: most files wait on child processes, disks and timers, so the
    // default (cores - 1, one file at a time here) leaves a core idle and the suite near CI's 15 minutes.
    maxWorkers: 2,
  },
});
