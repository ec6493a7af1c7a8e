import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests spawn real git, bash and node processes; two cores are shared with other work.
    maxWorkers: 2,
    // Each test file's temp folders live under its own TMPDIR, removed when the file ends.
    setupFiles: ['test/helpers/temp-root.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
