import { defineConfig } from 'vitest/config';
import { TEST_TIMEOUT_MS } from './test/helpers/hang-guard.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Hang guards only (test/helpers/hang-guard.ts): no test overrides them and none asserts a duration.
    testTimeout: TEST_TIMEOUT_MS,
    hookTimeout: TEST_TIMEOUT_MS,
    // Tests spawn real git, bash and node processes; two cores are shared with other work.
    maxWorkers: 2,
    // Each test file's temp folders live under its own TMPDIR, removed when the file ends.
    setupFiles: ['test/helpers/temp-root.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
