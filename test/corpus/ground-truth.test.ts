// Real bash as the ground truth of the red-team corpus (fixtures/corpus/redteam/*.yaml): each line runs
// under bash in a fresh temp tree (the monorepo as a real git repo, the Koda engine with a real Makefile
// run by real GNU make), with stand-in heavy programs on PATH that record their argv and physical working
// directory (test/helpers/standins/laptop/). Then the static verdict, judged on the same tree with file
// access, must agree with what bash did: a heavy program started => the line is refused or rerouted;
// nothing heavy started => the line is allowed (unless the entry says offhost fails closed there because
// the line is dynamic). A recorded program is heavy when the rules judge its real argv and directory heavy
// (what the exec-time layer sees); the Koda compiler stand-in is heavy wherever it runs.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGuard } from '../../src/config/load-guard.js';
import { quote } from '../../src/routes/quote.js';
import type { Decision } from '../../src/types.js';

interface Entry {
  line: string;
  cwd?: string;
  env?: Record<string, string>;
  expect: Decision;
  rule?: string;
  why: string;
  files?: boolean;
  /** Why this line is not run under bash here (a tool that cannot exist on the test machine). */
  bash?: string;
  /** Nothing heavy runs, yet offhost refuses: the line is dynamic where it matters (documented). */
  fail_closed?: boolean;
}

const STANDINS = fileURLToPath(new URL('../helpers/standins/laptop/', import.meta.url));
const CORPUS = fileURLToPath(new URL('../../fixtures/corpus/redteam/', import.meta.url));

/** Heavy programs: each a recorder. */
const HEAVY = [
  'koda-compile', 'emulator', 'flutter', 'dart', 'lb', 'qemu-system-x86_64', 'qemu-system-aarch64', 'kvm', 'qemu-kvm', 'xvfb-run', 'Xvfb', 'Xvnc', 'Xephyr', 'Xorg',
  'weston', 'labwc', 'cage', 'sway', 'river', 'wayfire', 'gnome-shell', 'kwin_wayland', 'mutter', 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable',
  'google-chrome-unstable', 'firefox', 'brave-browser', 'microsoft-edge-dev', 'msedge', 'headless_shell', 'chrome-headless-shell', 'chromedriver', 'geckodriver',
  'playwright', 'cypress', 'karma', 'wdio', 'testcafe', 'web-test-runner', 'test-storybook', 'lighthouse', 'vitest', 'ng', 'patrol', 'virsh', 'quickemu', 'VBoxManage',
  'selenium-server', 'pytest', 'xcrun', 'vagrant',
];
/** Tools modelled by _models (not installed here). */
const MODELS = ['chronic', 'rlwrap', 'cgexec', 'bear', 'scan-build', 'intercept-build', 'sshpass', 'dotenv', 'tsp', 'compiledb', 'numactl', 'ifne', 'cross-env', 'pueue', 'sem', 'at', 'batch', 'entr', 'nodemon', 'watchman-make', 'reflex', 'concurrently', 'start-server-and-test', 'busybox', 'toybox', 'npx'];

const KODA_MAKEFILE = [
  '.PHONY: build build-safe kasm all test check clean help lint fmt docs',
  'build:', '\tkoda-compile build',
  'build-safe:', '\tkoda-compile build-safe',
  'kasm:', '\tkoda-compile kasm',
  'all: build', '\t@echo all done',
  'test: build', '\t@echo tests ran',
  'check: build-safe',
  'clean:', '\t@echo cleaned',
  'help:', '\t@echo "make build | build-safe | kasm"',
  'lint:', '\t@echo linted',
  'fmt:', '\t@echo formatted',
  'docs:', '\t@echo docs',
  '',
].join('\n');

let base: string;
let template: string;
let counter = 0;

function sh(cmd: string, cwd: string): void {
  const r = spawnSync('bash', ['-c', cmd], { cwd, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: cwd, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
  if (r.status !== 0) throw new Error(`setup failed: ${cmd}: ${r.stderr}`);
}

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'offhost-gt-')));
  template = join(base, 'template');
  const home = join(template, 'home/koder');
  const root = join(home, 'dev/koder');
  const koda = join(root, 'engines/lang/koda');
  for (const d of [koda, join(root, 'apps/web'), join(root, 'apps/flow_mobile/integration_test'), join(root, 'apps/android'), join(root, 'docs'), join(template, 'tmp'), join(home, '.config')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(koda, 'Makefile'), KODA_MAKEFILE);
  writeFileSync(join(koda, 'main.c'), 'int main(void) { return 0; }\n');
  writeFileSync(join(root, 'docs/build.md'), 'Run make build-safe on the VM.\n');
  writeFileSync(join(root, 'apps/web/package.json'), '{"name":"web","scripts":{"start":"echo start","lint":"echo lint"}}\n');
  writeFileSync(join(root, 'apps/flow_mobile/integration_test/app_test.dart'), 'void main() {}\n');
  writeFileSync(join(root, 'README.md'), 'monorepo\n');
  cpSync(join(STANDINS, '_record'), join(root, 'apps/android/gradlew'));
  // Heavy programs at the paths the lines use: Playwright's CLI file, its headless shell, a macOS app bundle.
  mkdirSync(join(root, 'node_modules/@playwright/test'), { recursive: true });
  writeFileSync(join(root, 'node_modules/@playwright/test/cli.js'), "require('child_process').execFileSync('playwright', process.argv.slice(2), { stdio: 'inherit' });\n");
  const shell = join(home, '.cache/ms-playwright/chromium_headless_shell-1148/chrome-linux');
  const app = join(home, 'Applications/Google Chrome.app/Contents/MacOS');
  for (const d of [shell, app]) mkdirSync(d, { recursive: true });
  cpSync(join(STANDINS, '_record'), join(shell, 'headless_shell'));
  cpSync(join(STANDINS, '_record'), join(app, 'Google Chrome'));
  sh('git init -q -b main . && git add -A && git commit -qm one && echo two >> README.md && git commit -qam two', root);
  const bin = join(base, 'bin');
  mkdirSync(bin);
  for (const h of HEAVY) symlinkSync(join(STANDINS, '_record'), join(bin, h));
  for (const m of MODELS) symlinkSync(join(STANDINS, '_models'), join(bin, m));
  symlinkSync(join(STANDINS, 'ssh'), join(bin, 'ssh'));
});

afterAll(() => {
  if (base) rmSync(base, { recursive: true, force: true });
});

interface RunRecord {
  name: string;
  cwd: string;
  /** The variables the rules read (`WLR_BACKENDS`, `MOZ_HEADLESS`), as assignments; empty ones left out. */
  env: string[];
  argv: string[];
}

function records(log: string): RunRecord[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name, cwd, ...rest] = Buffer.from(l, 'base64').toString('utf8').split('\0').slice(0, -1);
      const dash = rest.indexOf('--');
      return { name: name!, cwd: cwd!, env: rest.slice(0, dash).filter((a) => !a.endsWith('=')), argv: rest.slice(dash + 1) };
    });
}

function load(group: string): Entry[] {
  const file = join(CORPUS, `${group}.yaml`);
  return existsSync(file) ? (parse(readFileSync(file, 'utf8')) as Entry[]) : [];
}

const groups = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.yaml')).map((f) => f.replace(/\.yaml$/, '')) : [];

for (const group of groups) {
  describe(`ground truth: ${group}`, () => {
    for (const e of load(group)) {
      const title = `${group}: ${e.line.replace(/\n/g, '\\n').slice(0, 110)}`;
      if (e.bash) {
        it.skip(`${title} (not run: ${e.bash})`, () => {});
        continue;
      }
      it(title, () => {
        const run = join(base, 'runs', String(++counter));
        cpSync(template, run, { recursive: true, verbatimSymlinks: true });
        const home = join(run, 'home/koder');
        // The line's /home/koder and /tmp are the run's own (lines never touch the real ones).
        const map = (s: string) => s.replace(/(^|[\s'"=:(])\/tmp(?=[/\s'";)]|$)/g, '$1\u0000TMP').replaceAll('/home/koder', home).replaceAll('\u0000TMP', `${run}/tmp`);
        const line = map(e.line);
        const cwd = map(e.cwd ?? '/home/koder/dev/koder');
        const log = join(run, 'heavy.log');
        const env: NodeJS.ProcessEnv = { HOME: home, PATH: `${join(base, 'bin')}:/usr/bin:/bin`, TMPDIR: join(run, 'tmp'), OFFHOST_GT_LOG: log, TERM: 'dumb', LANG: 'C.UTF-8', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t', ...(e.env ? Object.fromEntries(Object.entries(e.env).map(([k, v]) => [k, map(v)])) : {}) };
        const r = spawnSync('bash', ['-c', line], { cwd, env, input: '', encoding: 'utf8', timeout: 20_000 });
        const ran = records(log);
        const guard = loadGuard({ cwd, env: { HOME: home, PATH: env.PATH }, role: 'laptop' });
        const heavy = ran.filter((rec) => rec.name === 'koda-compile' || guard.classify([...rec.env.map((a) => a.replace(/=(.*)$/s, (_, v: string) => `=${quote(v)}`)), ...[rec.name, ...rec.argv].map(quote)].join(' '), { cwd: rec.cwd, files: false }).decision !== 'allow');
        const verdict = guard.classify(line, { cwd, env: { ...env, OFFHOST_GT_LOG: undefined } });
        const context = [
          `why: ${e.why}`,
          `bash ran (status ${r.status}${r.error ? ` ${r.error.message}` : ''}${r.signal ? `, ${r.signal}` : ''}): ${ran.map((x) => `${x.name} ${x.argv.join(' ')} @${x.cwd.replace(run, '')}`).join('; ') || 'nothing heavy or light recorded'}`,
          `heavy: ${heavy.length ? 'yes' : 'no'}; offhost said: ${verdict.decision} (${verdict.rule ?? 'no rule'}): ${verdict.reason.slice(0, 300)}`,
          `stderr: ${(r.stderr ?? '').slice(0, 400)}`,
          `stdout: ${(r.stdout ?? '').slice(0, 200)}; line as run: ${line.slice(0, 300)}`,
        ].join('\n');
        if (heavy.length) expect(verdict.decision, context).not.toBe('allow');
        else if (!e.fail_closed) expect(verdict.decision, context).toBe('allow');
        else expect(verdict.decision, context).not.toBe('allow');
        rmSync(run, { recursive: true, force: true });
        // Real processes (git, gdb, make) on a shared machine: a generous bound, never a timing assertion.
      }, 60_000);
    }
  });
}
