// The run-wide checks of test/helpers/global-setup.ts, on a real `vitest run` of a one-test project: a
// missing tool skips its tests and is named once; under OFFHOST_TEST_TOOLS=required (.ci/run) it fails the
// run. vitest only logs what a global teardown throws and exits 0, so this holds the exit status itself.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');

/** A project whose one test needs sshd, run by the real vitest with this repository's global setup. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-global-setup-'));
  // globals: the file sits outside the repository, where `import 'vitest'` would not resolve.
  writeFileSync(
    join(dir, 'needs-sshd.test.ts'),
    `import { missing, titled } from ${JSON.stringify(join(ROOT, 'test/helpers/tools.ts'))};\n` +
      `const why = missing('sshd');\n` +
      `describe.skipIf(why)(titled('needs sshd', why), () => { it('ran', () => { console.log('TEST-RAN'); }); });\n`,
  );
  writeFileSync(
    join(dir, 'vitest.config.mjs'),
    `export default { test: { root: ${JSON.stringify(dir)}, include: ['needs-sshd.test.ts'], globals: true, globalSetup: [${JSON.stringify(join(ROOT, 'test/helpers/global-setup.ts'))}] } };\n`,
  );
  return dir;
}

function run(dir: string, env: Record<string, string | undefined>) {
  const e: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete e[k];
  const r = spawnSync(process.execPath, [VITEST, 'run', '--config', join(dir, 'vitest.config.mjs')], { cwd: dir, env: e, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('the run-wide tool report', () => {
  it('a missing tool skips its tests and is named once; OFFHOST_TEST_TOOLS=required fails the run', () => {
    const dir = project();
    const lean = run(dir, { OFFHOST_TEST_SSHD: '/nonexistent/sshd', OFFHOST_TEST_TOOLS: undefined });
    expect(lean.out).not.toContain('TEST-RAN');
    expect(lean.out).toContain('skipped the tests that need a tool missing here');
    expect(lean.out.match(/sshd: \/nonexistent\/sshd could not run/g)).toHaveLength(1);
    expect(lean.status).toBe(0);

    const required = run(dir, { OFFHOST_TEST_SSHD: '/nonexistent/sshd', OFFHOST_TEST_TOOLS: 'required' });
    expect(required.out).not.toContain('TEST-RAN');
    expect(required.out).toContain('OFFHOST_TEST_TOOLS=required: sshd (/nonexistent/sshd could not run');
    expect(required.status).toBe(1);

    // And a tool that works (here an sshd whose config check passes) runs its test and fails nothing.
    const sshd = join(dir, 'sshd');
    writeFileSync(sshd, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const present = run(dir, { OFFHOST_TEST_SSHD: sshd, OFFHOST_TEST_TOOLS: 'required' });
    expect(present.out).toContain('TEST-RAN');
    expect(present.out).not.toContain('missing here');
    expect(present.status).toBe(0);
  });
});
