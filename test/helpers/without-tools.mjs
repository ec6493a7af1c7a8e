#!/usr/bin/env node
// `npm run test:without-tools`: the test files that drive optional system tools, run on a PATH without
// those tools (a folder of links to every other program on PATH), as on a fresh machine that lacks them.
// Passes when nothing fails and the tests needing a hidden tool were skipped, not run (.ci/run runs it).
//   node test/helpers/without-tools.mjs [FILE...]   (default: the files below)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
/** What .ci/run installs beyond a base system (test/helpers/tools.ts probes each). */
const HIDDEN = ['tmux', 'zsh', 'fish', 'sshd', 'rsync', 'gdb', 'perf', 'script', 'vim', 'ex', 'zip', 'fakeroot', 'm4', 'dc', 'setarch', 'linux64', 'choom', 'ssh-agent', 'tclsh', 'less'];
const FILES = [
  'test/helpers/tools.test.ts',
  'test/e2e/shell-tmux.test.ts',
  'test/adapters/shell-snippet.test.ts',
  'test/run/sshd.test.ts',
  'test/run/sync.test.ts',
  'test/run/outcomes.test.ts',
  'test/run/interrupt.test.ts',
  'test/run/ignored.test.ts',
  'test/run/preflight-interrupt.test.ts',
  'test/vms/hostkey.test.ts',
  'test/corpus/ground-truth.test.ts',
  'test/e2e/redteam-wrapper.test.ts',
  'test/lint/husky-e2e.test.ts',
  'test/cli/conventions.test.ts',
];
/** Files whose every test needs a hidden tool: none of their tests may run. */
const ALL_SKIPPED = ['test/e2e/shell-tmux.test.ts', 'test/run/sync.test.ts', 'test/run/interrupt.test.ts', 'test/run/ignored.test.ts', 'test/run/preflight-interrupt.test.ts', 'test/vms/hostkey.test.ts'];

const files = process.argv.length > 2 ? process.argv.slice(2) : FILES;
const work = mkdtempSync(join(tmpdir(), 'offhost-without-tools-'));
const bin = join(work, 'bin');
mkdirSync(bin);
// Every program of PATH (and of sbin, which the probes also search) but the hidden ones, first found first.
for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin']) {
  if (!dir || !existsSync(dir)) continue;
  for (const name of readdirSync(dir)) {
    if (HIDDEN.includes(name) || existsSync(join(bin, name))) continue;
    try {
      if (!statSync(join(dir, name)).isFile()) continue;
    } catch {
      continue;
    }
    symlinkSync(join(dir, name), join(bin, name));
  }
}

const report = join(work, 'report.json');
const env = { ...process.env, PATH: bin };
delete env.OFFHOST_TEST_SSHD;
// The tools are hidden on purpose here: their tests must skip, not fail the run.
delete env.OFFHOST_TEST_TOOLS;
const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', ...files, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
if (!existsSync(report)) {
  console.error(`without-tools: vitest wrote no report (status ${r.status})`);
  process.exit(1);
}
const results = JSON.parse(readFileSync(report, 'utf8'));
rmSync(work, { recursive: true, force: true });

const problems = [];
console.log(`\nwithout ${HIDDEN.join(', ')} on PATH:`);
for (const f of results.testResults) {
  const name = relative(ROOT, f.name);
  const by = (s) => f.assertionResults.filter((a) => a.status === s).length;
  console.log(`  ${name}: ${by('passed')} passed, ${by('skipped') + by('pending') + by('todo')} skipped, ${by('failed')} failed`);
  if (f.status === 'failed' && by('failed') === 0) problems.push(`${name}: ${f.message || 'the file failed'}`);
  for (const a of f.assertionResults.filter((x) => x.status === 'failed')) problems.push(`${name}: ${a.fullName}`);
  if (ALL_SKIPPED.includes(name) && by('passed') > 0) problems.push(`${name}: ${by('passed')} tests ran although every test there needs a hidden tool`);
}
for (const f of files) if (!results.testResults.some((x) => relative(ROOT, x.name) === f)) problems.push(`${f}: not run`);
if (problems.length) {
  console.error(`\nwithout-tools: ${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('without-tools: nothing failed; the tests needing a hidden tool were skipped.');
