// Every test file gets its own temporary folder as TMPDIR (os.tmpdir() and the processes the tests start
// put their temp folders there), removed with everything in it when the file's tests end: a test that
// forgets to clean up, or a process killed before its own clean-up, leaves nothing behind.
// Kept short (/tmp/oh-XXXXXX): Unix socket paths have a 108-byte limit.
import { afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

// A worker process runs several test files: remember the TMPDIR it started with.
const outer = (process.env.OFFHOST_TEST_OUTER_TMPDIR ??= process.env.TMPDIR || '/tmp');
const root = mkdtempSync(join(outer, 'oh-'));
process.env.TMPDIR = root;

afterAll(() => {
  process.env.TMPDIR = outer;
  rmSync(root, { recursive: true, force: true, maxRetries: 3 });
});
