// Once per `vitest run`: the V8 code caches the build wrote into dist/ must be the same at the end. A test
// that runs the executable under other V8 flags makes the loader rewrite its cache: such a test runs from a
// copy of dist/ (see test/e2e/hooks-stdin.test.ts).
// Also the run's shared folder of optional-tool probes (test/helpers/tools.ts): the tools found missing are
// printed once, when the run ends. With OFFHOST_TEST_TOOLS=required (.ci/run, which installs every tool)
// a missing tool fails the run instead: there a skip would hide a broken install, not a lean laptop.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { missingInRun } from './tool-results.js';

const DIST = join(import.meta.dirname, '..', '..', 'dist');

/** Every code cache in dist/: the hot bundle's, one per door, and each program family's. */
export function codeCaches(dist: string): string[] {
  if (!existsSync(dist)) return [];
  return (readdirSync(dist, { recursive: true }) as string[]).filter((f) => f.endsWith('.cache')).sort();
}

function digest(): string | null {
  const caches = codeCaches(DIST);
  if (caches.length === 0) return null;
  const h = createHash('sha256');
  for (const f of caches) h.update(f).update(readFileSync(join(DIST, f)));
  return h.digest('hex');
}

/**
 * Fails the run from the teardown: vitest only logs an error thrown there ("error during close") and still
 * exits 0, so the status is set here, and kept by vitest's exit (test/helpers/global-setup.test.ts).
 */
function fail(message: string): void {
  process.stderr.write(`\noffhost tests: ${message}\n`);
  process.exitCode = 1;
}

export default function setup(project: TestProject): () => void {
  const before = digest();
  const tools = mkdtempSync(join(tmpdir(), 'offhost-tools-'));
  project.provide('offhostToolResults', tools);
  return () => {
    const missing = missingInRun(tools);
    rmSync(tools, { recursive: true, force: true });
    if (missing.length) {
      process.stderr.write(`\noffhost tests: skipped the tests that need ${missing.length === 1 ? 'a tool' : 'tools'} missing here (.ci/run installs them):\n${missing.map(([t, why]) => `  ${t}: ${why}\n`).join('')}`);
    }
    if (missing.length && process.env.OFFHOST_TEST_TOOLS === 'required') {
      fail(`OFFHOST_TEST_TOOLS=required: ${missing.map(([t, why]) => `${t} (${why})`).join('; ')}; the tests needing them were skipped`);
    }
    const after = digest();
    if (before !== null && after !== null && before !== after) {
      fail('a test rewrote the code caches in dist/ (dist/*.cjs.cache): run the executable from a copy of dist/ in that test');
    }
  };
}
