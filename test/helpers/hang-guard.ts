// The suite's bounds, stated once. They are hang guards, never measurements: a test that needs them has
// hung, so they are generous (the 2-core machine is shared, and a busy one is several times slower).
// No test asserts how long something took; timings live in bench/.

/** The bound on each test and hook (vitest.config.ts). */
export const TEST_TIMEOUT_MS = 300_000;

/** The bound on a test's wait for something to happen (a file to appear, a process to end). */
export const WAIT_MS = 120_000;
