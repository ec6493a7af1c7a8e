// The red-team corpus (fixtures/corpus/redteam/*.yaml) and the laptop its lines run on under real bash:
// a template tree (the monorepo as a real git repo with two commits, the Koda engine with a real
// Makefile run by real GNU make whose build targets call a recording `koda-compile`), recording stand-ins
// for the heavy programs and models of tools that are not installed (test/helpers/standins/laptop/).
// Shared by test/corpus/ground-truth.test.ts (bash vs the static verdict) and
// test/e2e/redteam-wrapper.test.ts (the same lines through the $SHELL wrapper with the shims).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { Decision, Role } from '../../src/types.js';
import type { Guard } from '../../src/policy/guard.js';
import { quote } from '../../src/routes/quote.js';

/** One corpus entry (fixtures/corpus/*.yaml and its redteam/ folder; test/corpus.test.ts checks the keys). */
export interface Entry {
  line: string;
  cwd?: string;
  env?: Record<string, string>;
  role?: Role;
  expect: Decision;
  rule?: string;
  why: string;
  /** Red-team entries: judged with the disk only (in test/corpus/ground-truth.test.ts). */
  files?: boolean;
  /** Why this line is not run under bash here (a tool that cannot exist on the test machine). */
  bash?: string;
  /** Nothing heavy runs, yet offhost refuses: the line is dynamic where it matters (documented). */
  fail_closed?: boolean;
}

export const STANDINS = fileURLToPath(new URL('../helpers/standins/laptop/', import.meta.url));
const CORPUS = fileURLToPath(new URL('../../fixtures/corpus/redteam/', import.meta.url));

/** Heavy programs: each a recorder. */
export const HEAVY = [
  'koda-compile', 'emulator', 'flutter', 'dart', 'lb', 'qemu-system-x86_64', 'qemu-system-aarch64', 'kvm', 'qemu-kvm', 'xvfb-run', 'Xvfb', 'Xvnc', 'Xephyr', 'Xorg',
  'weston', 'labwc', 'cage', 'sway', 'river', 'wayfire', 'gnome-shell', 'kwin_wayland', 'mutter', 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable',
  'google-chrome-unstable', 'firefox', 'brave-browser', 'microsoft-edge-dev', 'msedge', 'headless_shell', 'chrome-headless-shell', 'chromedriver', 'geckodriver',
  'playwright', 'cypress', 'karma', 'wdio', 'testcafe', 'web-test-runner', 'test-storybook', 'lighthouse', 'vitest', 'ng', 'patrol', 'virsh', 'quickemu', 'VBoxManage',
  'selenium-server', 'pytest', 'xcrun', 'xcodebuild', 'vagrant', 'vmrun', 'prlctl', 'colima', 'minikube', 'firecracker', 'crosvm',
];
/** Tools modelled by _models (not installed here). */
export const MODELS = ['chronic', 'rlwrap', 'cgexec', 'bear', 'scan-build', 'intercept-build', 'sshpass', 'dotenv', 'tsp', 'compiledb', 'numactl', 'ifne', 'cross-env', 'pueue', 'sem', 'at', 'batch', 'entr', 'nodemon', 'watchman-make', 'reflex', 'concurrently', 'start-server-and-test', 'busybox', 'toybox', 'npx', 'torsocks', 'proxychains4', 'eatmydata', 'nocache', 'faketime', 'poetry', 'uv', 'bundle', 'direnv', 'xterm', 'socat', 'uvx', 'pipx', 'volta', 'colormake'];

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

export const GROUPS = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.yaml')).map((f) => f.replace(/\.yaml$/, '')) : [];

export function loadGroup(group: string): Entry[] {
  const file = join(CORPUS, `${group}.yaml`);
  return existsSync(file) ? (parse(readFileSync(file, 'utf8')) as Entry[]) : [];
}

export const GIT_IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

function sh(cmd: string, cwd: string): void {
  const r = spawnSync('bash', ['-c', cmd], { cwd, encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: cwd, ...GIT_IDENTITY } });
  if (r.status !== 0) throw new Error(`setup failed: ${cmd}: ${r.stderr}`);
}

export interface Laptop {
  /** The temp folder holding everything (remove it when done). */
  base: string;
  template: string;
  /** The recorders and models, to put on PATH. */
  bin: string;
}

/**
 * A temp folder with the template tree and the recorders (`bin/`). `symlinked`: ~/dev/koder is a relative
 * symbolic link to /data/koder of the tree (~/dev on another disk), so every copy links to its own.
 */
export function makeLaptop(prefix = 'offhost-gt-', layout: 'plain' | 'symlinked' = 'plain'): Laptop {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const template = join(base, 'template');
  const home = join(template, 'home/koder');
  const root = join(home, 'dev/koder');
  if (layout === 'symlinked') {
    mkdirSync(join(template, 'data/koder'), { recursive: true });
    mkdirSync(join(home, 'dev'), { recursive: true });
    symlinkSync('../../../data/koder', root);
  }
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
  // Executable with node's #! line, as the package ships it (`node_modules/@playwright/test/cli.js test` runs it by path).
  writeFileSync(join(root, 'node_modules/@playwright/test/cli.js'), "#!/usr/bin/env node\nrequire('child_process').execFileSync('playwright', process.argv.slice(2), { stdio: 'inherit' });\n", { mode: 0o755 });
  // offhost's own executable as npm installs it (node_modules/.bin/offhost -> the package's
  // dist/offhost.cjs): sh first (its #! line), then node on the same file (docs/BUILD.md).
  mkdirSync(join(root, 'node_modules/.bin'), { recursive: true });
  symlinkSync(fileURLToPath(new URL('../../dist/offhost.cjs', import.meta.url)), join(root, 'node_modules/.bin/offhost'));
  const shell = join(home, '.cache/ms-playwright/chromium_headless_shell-1148/chrome-linux');
  const app = join(home, 'Applications/Google Chrome.app/Contents/MacOS');
  for (const d of [shell, app]) mkdirSync(d, { recursive: true });
  cpSync(join(STANDINS, '_record'), join(shell, 'headless_shell'));
  cpSync(join(STANDINS, '_record'), join(app, 'Google Chrome'));
  // Issue 21 part B: git's own command runners. Hooks only a line's `-c core.hooksPath=…` reaches (the
  // repositories have no .git/hooks, so other lines' commits run nothing), husky's layout, and a
  // nested repository with husky installed; aliases and an ext:: remote in the repository's config.
  const hook = (file: string, body: string) => {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), body, { mode: 0o755 });
  };
  hook('tools/hooks/pre-commit', '#!/bin/sh\nmake -C engines/lang/koda build\n');
  hook('tools/hooks/pre-push', '#!/bin/sh\nmake -C engines/lang/koda build-safe\n');
  hook('tools/light-hooks/pre-commit', '#!/bin/sh\nmake -C engines/lang/koda lint\n');
  hook('tools/light-hooks/post-checkout', '#!/bin/sh\necho checked out\n');
  // Quiet ones, for programs that read the protocol of what they start (scp/sftp -S, sftp -D, rsync -e): a
  // build's output there is garbage to them, and they may stop the script before the build starts. The
  // shell keeps its stdout open until make ends (no exec), so the reader sees nothing until then.
  hook('tools/quiet/build', '#!/bin/sh\nmake -C engines/lang/koda build >/dev/null 2>&1\n');
  hook('tools/quiet/lint', '#!/bin/sh\nmake -C engines/lang/koda lint >/dev/null 2>&1\n');
  hook('.husky/pre-commit', 'make -C engines/lang/koda build-safe\n');
  hook('tools/tmpl/hooks/post-checkout', '#!/bin/sh\nmake -C engines/lang/koda build\n');
  hook('.husky/_/pre-commit', '#!/usr/bin/env sh\n. "${0%/*}/h"\n');
  hook('.husky/_/h', '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n');
  sh('git init -q --template= -b main . && git add -A && git commit -qm one && echo two >> README.md && git commit -qam two', root);
  // A second checkout of the monorepo (issue 20): a clone at ~/src/koder, and ~/koder-link -> it.
  mkdirSync(join(home, 'src'));
  sh(`git clone -q --template= ${quote(root)} src/koder && ln -s src/koder koder-link`, home);
  sh([
    'git config alias.kb "!make -C engines/lang/koda build"',
    'git config alias.kdry "!make -n -C engines/lang/koda build"',
    'git config alias.lg "log --oneline"',
    // The command's standard output is git's protocol: make's own output goes to stderr, or git may close
    // the pipe (and make die of SIGPIPE) before the build starts.
    'git config remote.extbuild.url "ext::sh -c make% -C% engines/lang/koda% build% >&2"',
  ].join(' && '), root);
  const hooked = join(root, 'apps/hooked');
  mkdirSync(join(hooked, '.husky/_'), { recursive: true });
  writeFileSync(join(hooked, '.husky/pre-commit'), 'make -C ../../engines/lang/koda build\n', { mode: 0o755 });
  cpSync(join(root, '.husky/_'), join(hooked, '.husky/_'), { recursive: true });
  writeFileSync(join(hooked, 'README.md'), 'hooked\n');
  sh('git init -q --template= -b main . && git add -A && git commit -qm one && git config core.hooksPath .husky/_', hooked);
  // Each line runs in its own copy of the template: git's sample hooks (--template= above) and one file per
  // loose object would be most of what is copied and removed, so the objects go into one pack.
  for (const repo of [root, join(home, 'src/koder'), hooked]) sh('git repack -adq', repo);
  const bin = join(base, 'bin');
  mkdirSync(bin);
  for (const h of HEAVY) symlinkSync(join(STANDINS, '_record'), join(bin, h));
  for (const m of MODELS) symlinkSync(join(STANDINS, '_models'), join(bin, m));
  symlinkSync(join(STANDINS, 'ssh'), join(bin, 'ssh'));
  symlinkSync(join(STANDINS, 'ssh'), join(bin, 'mosh'));
  return { base, template, bin };
}

export interface Run {
  dir: string;
  home: string;
  /** The line's /home/koder and /tmp made the run's own (lines never touch the real ones). */
  map: (s: string) => string;
  line: string;
  cwd: string;
  /** The entry's own environment, mapped. */
  env: Record<string, string>;
}

/** A fresh copy of the template for one entry, at `dir`. */
export function makeRun(laptop: Laptop, dir: string, e: Entry): Run {
  cpSync(laptop.template, dir, { recursive: true, verbatimSymlinks: true });
  return runIn(dir, e);
}

/** The entry's line, directory and environment mapped into the tree at `dir` (copied there or not). */
export function runIn(dir: string, e: Entry): Run {
  const home = join(dir, 'home/koder');
  const map = (s: string) => s.replace(/(^|[\s'"=:(])\/tmp(?=[/\s'";)]|$)/g, '$1\u0000TMP').replaceAll('/home/koder', home).replaceAll('\u0000TMP', `${dir}/tmp`);
  return {
    dir,
    home,
    map,
    line: map(e.line),
    cwd: map(e.cwd ?? '/home/koder/dev/koder'),
    env: e.env ? Object.fromEntries(Object.entries(e.env).map(([k, v]) => [k, map(v)])) : {},
  };
}

export interface RunRecord {
  name: string;
  cwd: string;
  /** The variables the rules read (`WLR_BACKENDS`, `MOZ_HEADLESS`), as assignments; empty ones left out. */
  env: string[];
  argv: string[];
  /** It saw LAPTOP_MARKER=1 (only the laptop side has it: the VM stand-ins start with a fresh environment). */
  laptop: boolean;
}

/** What the recorders appended to `log`. */
export function records(log: string): RunRecord[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name, cwd, ...rest] = Buffer.from(l, 'base64').toString('utf8').split('\0').slice(0, -1);
      const dash = rest.indexOf('--');
      const vars = rest.slice(0, dash);
      return {
        name: name!,
        cwd: cwd!,
        env: vars.filter((a) => !a.endsWith('=') && !a.startsWith('LAPTOP_MARKER=')),
        argv: rest.slice(dash + 1),
        laptop: vars.includes('LAPTOP_MARKER=1'),
      };
    });
}

/**
 * A recorded start is heavy when the rules judge its real argv and directory heavy (what the exec-time
 * layer sees); the Koda compiler stand-in is heavy wherever it runs.
 */
export function isHeavy(rec: RunRecord, guard: Guard): boolean {
  if (rec.name === 'koda-compile') return true;
  const line = [...rec.env.map((a) => a.replace(/=(.*)$/s, (_, v: string) => `=${quote(v)}`)), ...[rec.name, ...rec.argv].map(quote)].join(' ');
  return guard.classify(line, { cwd: rec.cwd, files: false }).decision !== 'allow';
}
