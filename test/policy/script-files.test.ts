// Scripts a line runs are read from disk and judged by what they run: `bash run.sh`, `./build.sh`,
// `. ./env.sh`, `python3 tool.py`, `npm run e2e` (package.json). Real files in a temp tree, through the
// guard with its real disk access; four groups as in the corpus.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Guard } from '../../src/policy/guard.js';
import { loadGuard } from '../../src/config/load-guard.js';
import { diskFiles, SCRIPT_MAX } from '../../src/policy/disk-files.js';

let home: string;
let koda: string;
let web: string;
let guard: Guard;

function file(path: string, text: string | Buffer, mode = 0o644): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
}

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'offhost-scripts-'));
  koda = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
  web = join(home, 'dev', 'koder', 'apps', 'web');
  file(join(koda, 'build.sh'), '#!/bin/bash\nset -e\nmake build-safe\n', 0o755);
  file(join(koda, 'target.sh'), '#!/bin/sh\nmake "$1"\n', 0o755);
  file(join(koda, 'noshebang'), 'make kasm\n', 0o755);
  file(join(koda, 'env.sh'), 'export CC=clang\ncd tools\n');
  file(join(koda, 'lint.sh'), '#!/usr/bin/env bash\nshellcheck *.sh\ngit status --short\n', 0o755);
  file(join(koda, 'calls-build.sh'), '#!/bin/bash\n./build.sh\n', 0o755);
  file(join(koda, 'self.sh'), '#!/bin/bash\necho again\nbash self.sh\n', 0o755);
  file(join(koda, 'broken.sh'), '#!/bin/bash\nif then fi (\n', 0o755);
  file(join(koda, 'tool.py'), 'import subprocess\nsubprocess.run(\n    ["make", "build-safe"],\n    check=True,\n)\n');
  file(join(koda, 'hello.py'), 'print("make build-safe is what CI runs")\n');
  file(join(koda, 'run.py'), '#!/usr/bin/env python3\nimport os\nos.system("emulator -avd Pixel_7")\n', 0o755);
  file(join(koda, 'Makefile.run'), '#!/usr/bin/make -f\nall:\n\techo hi\n', 0o755);
  file(join(koda, 'tool.fish'), 'make build-safe; and echo ok\n', 0o755);
  file(join(koda, 'big.sh'), `# ${'x'.repeat(SCRIPT_MAX)}\nmake build-safe\n`, 0o755);
  // bash runs the lines of a file with a NUL after its first line; one with a NUL in its first line is a binary.
  file(join(koda, 'nul.sh'), Buffer.from('#!/bin/bash\necho hi\nmake build-safe\n\0\n'), 0o755);
  file(join(koda, 'nulfirst.sh'), Buffer.from('x\0y\nmake build-safe\n'), 0o755);
  symlinkSync('loop.sh', join(koda, 'loop.sh')); // a link to itself: open fails with ELOOP
  file(join(koda, 'scripts', 'build'), '#!/bin/sh\nmake build-safe\n', 0o755);
  file(join(koda, 'scripts', 'deep', 'lint'), '#!/bin/sh\nshellcheck *.sh\n', 0o755);
  file(join(koda, 'tmux', 'run.conf'), "# start-up\nrun-shell 'make build-safe'\n");
  file(join(koda, 'tmux', 'dc.conf'), "set -g default-command 'make build-safe'\n");
  file(join(koda, 'tmux', 'if.conf'), "if-shell 'test -e x' {\n  run-shell -b 'make kasm'\n}\n");
  file(join(koda, 'tmux', 'src.conf'), `source-file ${join(koda, 'tmux', 'dc.conf')}\n`);
  file(join(koda, 'tmux', 'benign.conf'), "set -g status-right '#(date +%H:%M)'\nbind r source-file ~/.tmux.conf \\; display 'make build-safe'\nrun-shell 'echo ready'\n");
  file(join(koda, 'tmux', 'open.conf'), "run-shell 'make build-safe\n");
  file(join(koda, 'bin', 'fast'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]), 0o755);
  file(join(web, 'package.json'), JSON.stringify({ name: 'web', scripts: { test: 'vitest run', e2e: 'playwright test', pree2e: 'echo start', build: 'tsc -p .', 'test:browser': 'flutter test --device-id chrome', nested: 'npm run e2e' } }));
  file(join(web, 'src', 'keep'), '');
  file(join(home, 'dev', 'koder', 'apps', 'broken', 'package.json'), '{ "scripts": ');
  // Makefiles: a web app's, and the Koda engine's own (whose clean recipe uses variables from outside).
  file(join(web, 'Makefile'), 'PW = npx playwright\n.PHONY: e2e test clean emu\ntest:\n\tvitest run\ne2e: deps\n\t$(PW) test\ndeps:\n\tnpm ci\nemu:\n\temulator -avd $(AVD) -no-window\nclean:\n\t$(RM) -r dist $(EXTRA_DIRS)\n\t$(TOOL) build --clean\nodd:\n\techo "unbalanced\n');
  file(join(koda, 'Makefile'), 'build-safe:\n\t$(CC) $(CFLAGS) -o koda src/*.c\nclean:\n\t$(RM) koda\n\t$(MAKE) -C tools clean $(ARGS)\n');
  // Two workspace trees: npm/yarn "workspaces" and pnpm-workspace.yaml.
  const npmWs = join(home, 'ws-npm');
  file(join(npmWs, 'package.json'), JSON.stringify({ name: 'root', private: true, workspaces: ['apps/*', 'tools/cli'], scripts: { e2e: 'echo root' } }));
  file(join(npmWs, 'apps', 'web', 'package.json'), JSON.stringify({ name: '@acme/web', scripts: { e2e: 'playwright test', test: 'vitest run' } }));
  file(join(npmWs, 'apps', 'api', 'package.json'), JSON.stringify({ name: '@acme/api', scripts: { test: 'vitest run', e2e: 'node e2e.js' } }));
  file(join(npmWs, 'tools', 'cli', 'package.json'), JSON.stringify({ name: 'cli', scripts: { test: 'flutter test -d chrome' } }));
  const pnpmWs = join(home, 'ws-pnpm');
  file(join(pnpmWs, 'package.json'), JSON.stringify({ name: 'root', private: true }));
  file(join(pnpmWs, 'pnpm-workspace.yaml'), "packages:\n  - 'packages/**'\n  - \"!**/test/**\"\n");
  file(join(pnpmWs, 'packages', 'ui', 'package.json'), JSON.stringify({ name: 'ui', scripts: { e2e: 'playwright test' } }));
  file(join(pnpmWs, 'packages', 'core', 'lib', 'package.json'), JSON.stringify({ name: 'core-lib', scripts: { e2e: 'echo none' } }));
  // A Deno app: tasks in deno.jsonc (comments, trailing commas, a task object with dependencies).
  const denoApp = join(home, 'dev', 'koder', 'apps', 'deno');
  file(join(denoApp, 'deno.jsonc'), '{\n  // the app\'s tasks\n  "tasks": {\n    "e2e": { "command": "playwright test", "dependencies": ["prep"] },\n    "prep": "echo a // not a comment, }",\n    "emu": { "dependencies": ["boot"] },\n    "boot": "emulator -avd Pixel_7",\n    "unit": "deno test", /* last */\n  },\n}\n');
  file(join(denoApp, 'site', 'package.json'), JSON.stringify({ scripts: { e2e: 'playwright test --project chromium', lint: 'eslint .' } }));
  file(join(denoApp, 'spawn.ts'), 'new Deno.Command("npx", { args: ["playwright", "test"] }).spawn();\n');
  file(join(home, 'dev', 'koder', 'apps', 'deno-broken', 'deno.json'), '{ "tasks": ');
  // A justfile at the monorepo root, and one of the web app's as a module.
  const root = join(home, 'dev', 'koder');
  file(
    join(root, 'justfile'),
    [
      'set shell := ["bash", "-cu"]',
      'sha := `git rev-parse --short HEAD`',
      'goal := "build-safe"',
      '',
      '# lint is the default',
      'default: lint',
      'lint:',
      '  shellcheck scripts/*.sh',
      'alias k := koda',
      'koda:',
      '  @make -C engines/lang/koda {{goal}}',
      'release: (koda) && notes',
      '  echo released {{sha}}',
      'notes:',
      '  echo notes',
      'koda-goal GOAL:',
      '  make -C engines/lang/koda {{GOAL}}',
      '[no-cd]',
      'here:',
      '  make build-safe',
      'py:',
      '  #!/usr/bin/env python3',
      '  import subprocess',
      '  subprocess.run(["emulator", "-avd", "Pixel_7"])',
      "mod web 'apps/web/web.just'",
      '',
    ].join('\n'),
  );
  file(join(web, 'web.just'), 'e2e:\n\tnpx playwright test\nunit:\n\tvitest run\n');
  // A Taskfile at the root, including the web app's.
  file(
    join(root, 'Taskfile.yml'),
    [
      "version: '3'",
      'includes:',
      '  web: ./apps/web',
      'tasks:',
      '  default:',
      '    deps: [lint]',
      '  lint: shellcheck scripts/*.sh',
      '  koda:',
      '    dir: engines/lang/koda',
      '    cmds:',
      '      - make build-safe',
      '  koda-goal:',
      '    dir: engines/lang/koda',
      '    cmds:',
      "      - make {{.GOAL}}",
      '  release:',
      '    cmds:',
      "      - echo releasing",
      '      - task: koda',
      '  emu:',
      '    cmds:',
      '      - |',
      '        adb start-server',
      '        emulator -avd Pixel_7 -no-window',
      '  odd:',
      '    cmds:',
      '      - [not, a, command]',
      '',
    ].join('\n'),
  );
  file(join(web, 'Taskfile.yml'), "version: '3'\ntasks:\n  e2e:\n    cmds:\n      - npx playwright test\n  unit: vitest run\n");
  file(join(home, 'dev', 'koder', 'apps', 'odd-yaml', 'Taskfile.yml'), "tasks:\n  x: &a\n    cmds: [make build-safe]\n  y: *a\n");
  file(join(home, 'dev', 'koder', 'apps', 'odd-pw', 'Taskfile.yml'), "tasks:\n  lint: &l\n    cmds:\n      - eslint .\n  e2e:\n    cmds:\n      - npx playwright test\n  again: *l\n");
  // An Nx workspace: project.json targets (executors, run-commands, dependsOn), package.json scripts, a
  // known plugin's inferred e2e, and an executor offhost does not know.
  const nxWs = join(home, 'ws-nx');
  file(join(nxWs, 'nx.json'), JSON.stringify({ plugins: [{ plugin: '@nx/playwright/plugin', options: { targetName: 'pw' } }] }));
  file(join(nxWs, 'package.json'), JSON.stringify({ name: 'root', private: true, workspaces: ['apps/*'] }));
  file(join(nxWs, 'apps', 'web', 'project.json'), JSON.stringify({ name: 'web', targets: { e2e: { executor: '@nx/playwright:playwright' }, emu: { executor: 'nx:run-commands', options: { command: 'emulator -avd Pixel_7' } }, build: { command: 'tsc -p apps/web' }, ship: { dependsOn: ['emu'], command: 'echo shipped' }, deploy: { executor: '@acme/tools:deploy' } } }));
  file(join(nxWs, 'apps', 'web', 'package.json'), JSON.stringify({ name: '@acme/web', scripts: { lint: 'eslint .', 'e2e-ci': 'playwright test --project chromium' } }));
  file(join(nxWs, 'apps', 'site', 'package.json'), JSON.stringify({ name: 'site', scripts: { test: 'vitest run' } }));
  file(join(nxWs, 'apps', 'site', 'playwright.config.ts'), 'export default {};\n');
  file(join(nxWs, 'apps', 'site', 'src', 'keep'), '');
  // Symlinked checkouts: a link to the engine and one to the web app's src folder.
  // Files of commands a database shell reads (src/shell/programs/database-shells.ts).
  file(join(koda, 'sql', 'escape.sql'), 'select 1;\n.system make build-safe\n');
  file(join(koda, 'sql', 'includes.sql'), 'select 1;\n.read sql/escape.sql\n');
  file(join(koda, 'sql', 'psql.sql'), 'select 1;\n\\! make kasm\n');
  file(join(koda, 'sql', 'psql-include.sql'), '\\i sql/psql.sql\n');
  file(join(koda, 'sql', 'mysql.sql'), 'select 1;\nsystem make build\n');
  file(join(koda, 'sql', 'self.sql'), '.read sql/self.sql\n');
  file(join(koda, 'sql', 'plain.sql'), "select 'make build-safe';\n.tables\n");
  symlinkSync(koda, join(home, 'koda-link'));
  symlinkSync(join(web, 'src'), join(home, 'web-src-link'));
  const fifo = join(koda, 'pipe.sh');
  spawnSync('mkfifo', [fifo]);
  guard = loadGuard({ cwd: home, env: { HOME: home, PATH: process.env.PATH, XDG_CONFIG_HOME: join(home, 'xdg') }, role: 'laptop' });
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const at = (dir: () => string) => (line: string) => guard.classify(line, { cwd: dir() });
const inKoda = at(() => koda);
const inWeb = at(() => web);

describe('database shells: the files of commands they read', () => {
  it.each([
    ["sqlite3 :memory: '.read sql/escape.sql'", 'reroute'],
    ['sqlite3 -init sql/escape.sql :memory: .quit', 'reroute'],
    ["sqlite3 :memory: '.read sql/includes.sql'", 'reroute'], // an include in an included file
    ['sqlite3 :memory: < sql/escape.sql', 'reroute'],
    ['psql -f sql/psql.sql', 'reroute'],
    ['psql --file=sql/psql-include.sql', 'reroute'],
    ['mysql < sql/mysql.sql', 'reroute'],
    ["mysql -e 'source sql/mysql.sql'", 'reroute'],
    // The line writes the file it then reads: what it wrote is what runs.
    ["printf '.system make build-safe\\n' > sql/new.sql; sqlite3 :memory: '.read sql/new.sql'", 'reroute'],
  ])('%s -> %s (koda-make)', (line, decision) => {
    expect(inKoda(line)).toMatchObject({ decision, rule: 'koda-make' });
  });
  it.each([
    ["sqlite3 :memory: '.read sql/plain.sql'"],
    ["sqlite3 :memory: '.read sql/self.sql'"], // includes itself: read to the limit, nothing runs
    ["sqlite3 :memory: '.read sql/missing.sql'"],
    ['psql -f sql/plain.sql'],
  ])('%s -> nothing heavy', (line) => {
    expect(inKoda(line).decision).toBe('allow');
  });
});

describe('true positives: a heavy command inside a script the line runs', () => {
  it.each([
    ['bash build.sh', 'reroute', 'koda-make'],
    ['./build.sh', 'reroute', 'koda-make'],
    ['sh ./build.sh --verbose', 'reroute', 'koda-make'],
    ['. ./build.sh', 'reroute', 'koda-make'],
    ['source build.sh', 'reroute', 'koda-make'],
    ['./noshebang', 'reroute', 'koda-make'],
    ['./calls-build.sh', 'reroute', 'koda-make'],
    ['timeout 600 ./build.sh', 'reroute', 'koda-make'],
    ['sudo -E bash build.sh', 'reroute', 'koda-make'],
    ['./target.sh build', 'reroute', 'koda-make'],
    // The code is read (src/shell/inline/): its spawn is judged as the command it is.
    ['python3 tool.py', 'reroute', 'koda-make'],
    ['python3 -u tool.py --fast', 'reroute', 'koda-make'],
    ['./run.py', 'reroute', 'android-emulator'],
  ])('in the Koda engine: %s -> %s (%s)', (line, decision, rule) => {
    expect(inKoda(line)).toMatchObject({ decision, rule });
  });
  it.each([
    ['npm run e2e', 'playwright-test'],
    ['npm run e2e -- --headed', 'playwright-test'],
    ['pnpm e2e', 'playwright-test'],
    ['yarn e2e', 'playwright-test'],
    ['yarn run e2e', 'playwright-test'],
    ['bun run e2e', 'playwright-test'],
    ['npm run test:browser', 'flutter-test-browser'],
    ['npm run nested', 'playwright-test'],
    ['cd src && npm run e2e', 'playwright-test'],
  ])('package.json scripts: %s -> %s', (line, rule) => {
    expect(inWeb(line)).toMatchObject({ decision: 'reroute', rule });
  });
  it.each([
    ['deno task e2e', 'reroute', 'playwright-test'],
    ['deno task emu', 'reroute', 'android-emulator'], // through a task's dependencies
    ['deno task unit', 'allow', 'r1-unit-tests'],
    ['deno task prep', 'allow', 'r1-inspection'], // `//` in a string is not a comment
    ['cd site && deno task lint', 'allow', 'r1-inspection'], // not a deno.jsonc task: site's package.json
    ['deno task --cwd site lint', 'allow', 'r1-editing'],
    ['deno run -A spawn.ts', 'deny', 'inline-code-heavy'],
    ['deno spawn.ts', 'deny', 'inline-code-heavy'],
    ['cd site && node --run e2e', 'reroute', 'playwright-test'],
    ['cd site && node --run=e2e -- --headed', 'reroute', 'playwright-test'],
    ['cd site && node --run lint', 'allow', 'r1-inspection'],
    ['cd ../deno-broken && deno task e2e', 'allow', 'r1-inspection'], // deno cannot read its config: nothing runs
  ])('Deno tasks and node --run: %s -> %s (%s)', (line, decision, rule) => {
    expect(guard.classify(line, { cwd: join(home, 'dev', 'koder', 'apps', 'deno') })).toMatchObject({ decision, rule });
  });
  it.each([
    ['just koda', 'reroute', 'koda-make'],
    ['just k', 'reroute', 'koda-make'], // an alias
    ['just release', 'reroute', 'koda-make'], // a dependency
    ['cd engines/lang/koda && just koda', 'reroute', 'koda-make'], // the justfile above, run in its own folder
    ['cd engines/lang/koda && just here', 'reroute', 'koda-make'], // [no-cd]: where just was started
    ['just here', 'allow', 'r1-inspection'],
    ['just koda-goal build-safe', 'deny', 'koda-make'], // a parameter: unknown, and the rule denies on unknown
    ['just py', 'reroute', 'android-emulator'],
    ['just web e2e', 'reroute', 'playwright-test'],
    ['just web::e2e', 'reroute', 'playwright-test'],
    ['just web unit', 'allow', 'r1-inspection'],
    ['just', 'allow', 'r1-inspection'],
    ['just --list', 'allow', null],
    ['just -n koda', 'allow', null],
    ['just --command make -C engines/lang/koda build-safe', 'reroute', 'koda-make'],
    ["printf 'x:\\n\\tmake -C engines/lang/koda build-safe\\n' > justfile && just x", 'deny', 'unknown-program'],
  ])('justfiles: %s -> %s (%s)', (line, decision, rule) => {
    expect(guard.classify(line, { cwd: join(home, 'dev', 'koder') })).toMatchObject({ decision, rule });
  });
  it.each([
    ['task koda', 'reroute', 'koda-make'],
    ['task release', 'reroute', 'koda-make'], // a task a command calls
    ['cd engines/lang/koda && task koda', 'reroute', 'koda-make'], // the Taskfile above
    ['task koda-goal GOAL=build-safe', 'deny', 'koda-make'], // a template: unknown
    ['task emu', 'reroute', 'android-emulator'], // a block scalar of commands
    ['task web:e2e', 'reroute', 'playwright-test'],
    ['task --dir apps/web e2e', 'reroute', 'playwright-test'],
    ['task web:unit', 'allow', 'r1-unit-tests'],
    ['task', 'allow', 'r1-editing'], // default: lint, shellcheck
    ['task --list', 'allow', null],
    // Unknown, judged as an unknown program: refused where a heavy command is plausible (the engine).
    ['task odd', 'allow', null], // a command of a shape task files do not have
    ['cd engines/lang/koda && task odd', 'deny', 'unknown-program'],
    ['cd engines/lang/koda && task -t ../../../apps/odd-yaml/Taskfile.yml x', 'deny', 'unknown-program'], // YAML offhost does not read (an anchor)
    // A Taskfile offhost cannot read is also read line by line: a heavy command in any task counts.
    ['cd apps/odd-pw && task again', 'reroute', 'playwright-test'],
    ['cd engines/lang/koda && task -t ../../../apps/odd-yaml/Taskfile.yml y', 'deny', 'unknown-program'],
  ])('Taskfiles: %s -> %s (%s)', (line, decision, rule) => {
    expect(guard.classify(line, { cwd: join(home, 'dev', 'koder') })).toMatchObject({ decision, rule });
  });
  it.each([
    ['nx run web:e2e', 'reroute', 'playwright-test'],
    ['nx e2e web', 'reroute', 'playwright-test'],
    ['npx nx run web:emu', 'reroute', 'android-emulator'],
    ['nx run web:ship', 'reroute', 'android-emulator'], // through dependsOn
    ['nx run web:e2e-ci', 'reroute', 'playwright-test'], // a package.json script
    ['nx run-many -t e2e', 'reroute', 'playwright-test'],
    ['nx affected --target=emu', 'reroute', 'android-emulator'],
    ['nx run site:pw', 'reroute', 'playwright-test'], // the plugin's inferred target (site has a playwright config)
    ['cd apps/site/src && nx pw', 'reroute', 'playwright-test'], // the project here
    ['nx run web:build', 'allow', 'r1-editing'],
    ['nx run site:test', 'allow', 'r1-unit-tests'],
    ['nx graph', 'allow', null],
    ['nx run web:deploy', 'allow', null], // an executor offhost does not know: unknown (nothing heavy is plausible here)
    ['nx exec -- emulator -avd Pixel_7', 'reroute', 'android-emulator'],
  ])('Nx: %s -> %s (%s)', (line, decision, rule) => {
    expect(guard.classify(line, { cwd: join(home, 'ws-nx') })).toMatchObject({ decision, rule });
  });
  it('Nx: what cannot be read is unknown, refused where heavy work is plausible', () => {
    const v = guard.explain('nx run web:deploy --headless', { cwd: join(home, 'ws-nx') });
    expect(v.verdict).toMatchObject({ decision: 'deny', rule: 'unknown-program' });
    expect(v.decision!.commands.some((c) => c.command.via.some((x) => x.includes('executor @acme/tools:deploy')))).toBe(true);
  });
  it.each([
    ['koda-link', 'just koda', 'reroute', 'koda-make'],
    ['koda-link', 'task koda', 'reroute', 'koda-make'],
    ['koda-link', 'make build-safe', 'reroute', 'koda-make'],
    ['web-src-link', 'npm run e2e', 'reroute', 'playwright-test'],
    ['web-src-link', 'node --run e2e', 'reroute', 'playwright-test'],
    ['web-src-link', 'yarn e2e', 'reroute', 'playwright-test'],
  ])('from a symlinked checkout (%s), the tools search the checkout\'s parents: %s -> %s (%s)', (link, line, decision, rule) => {
    expect(guard.classify(line, { cwd: join(home, link) })).toMatchObject({ decision, rule });
    expect(guard.classify(`cd ~/${link} && ${line}`, { cwd: home })).toMatchObject({ decision, rule });
  });
  it('the commands say where they came from', () => {
    const { decision } = guard.explain('npm run e2e', { cwd: web });
    const pw = decision!.commands.find((c) => c.command.program === 'playwright')!;
    expect(pw.command.via).toEqual(['npm run e2e (package.json "e2e")']);
    expect(pw.command.cwd).toBe(web);
  });
});

describe('workspaces: the script in each selected package', () => {
  const npmWs = () => join(home, 'ws-npm');
  const pnpmWs = () => join(home, 'ws-pnpm');
  it.each([
    ['npm run e2e --workspaces', 'reroute', 'playwright-test'],
    ['npm run e2e -ws', 'reroute', 'playwright-test'],
    ['npm run e2e -w @acme/web', 'reroute', 'playwright-test'],
    ['npm run e2e -w apps/web', 'reroute', 'playwright-test'],
    ['npm run e2e --workspace=@acme/api', 'allow', null],
    ['npm test -w cli', 'reroute', 'flutter-test-browser'],
    ['npm test -w @acme/api', 'allow', 'r1-unit-tests'],
    ['yarn workspace @acme/web e2e', 'reroute', 'playwright-test'],
    ['yarn workspace @acme/api run e2e', 'allow', null],
    ['yarn workspaces foreach -A run test', 'reroute', 'flutter-test-browser'],
  ])('npm/yarn workspaces: %s -> %s', (line, decision, rule) => {
    expect(guard.classify(line, { cwd: npmWs() })).toMatchObject({ decision, rule });
  });
  it.each([
    ['pnpm -r e2e', 'reroute', 'playwright-test'],
    ['pnpm --filter ui e2e', 'reroute', 'playwright-test'],
    ['pnpm --filter core-lib run e2e', 'allow', 'r1-inspection'],
    ['pnpm --filter "./packages/**" e2e', 'reroute', 'playwright-test'],
    ['pnpm --filter "ui..." e2e', 'reroute', 'playwright-test'],
  ])('pnpm workspaces (packages/**): %s -> %s', (line, decision, rule) => {
    expect(guard.classify(line, { cwd: join(pnpmWs(), 'packages', 'core', 'lib') })).toMatchObject({ decision, rule });
  });
  it.each([
    ['turbo run e2e', 'reroute', 'playwright-test'],
    ['turbo e2e --filter=@acme/web', 'reroute', 'playwright-test'],
    ['npx turbo run lint e2e --filter=@acme/api', 'allow', null],
    ['turbo run @acme/web#e2e', 'reroute', 'playwright-test'],
    ['turbo run e2e --dry-run', 'allow', null],
    ['turbo run test --affected', 'reroute', 'flutter-test-browser'],
    ['lerna run e2e --scope @acme/web', 'reroute', 'playwright-test'],
    ['lerna run e2e --scope @acme/api', 'allow', null],
    ['lerna exec -- npx playwright test', 'reroute', 'playwright-test'],
  ])('turbo and lerna over the workspace: %s -> %s', (line, decision, rule) => {
    expect(guard.classify(line, { cwd: npmWs() })).toMatchObject({ decision, rule });
  });
  it('says which package a command came from', () => {
    const { decision } = guard.explain('npm run e2e -ws', { cwd: npmWs() });
    const pw = decision!.commands.find((c) => c.command.program === 'playwright')!;
    expect(pw.command.via).toEqual(['npm run e2e [apps/web] (package.json "e2e")']);
    expect(pw.command.cwd).toBe(join(npmWs(), 'apps', 'web'));
  });
  it('without a workspace root, the script is unknown (denied where heavy work is plausible)', () => {
    expect(guard.classify('npm run e2e -ws', { cwd: koda })).toMatchObject({ decision: 'deny', rule: 'unknown-program' });
  });
});

describe('Makefiles: the recipes of the targets make runs', () => {
  it.each([
    ['make e2e', 'reroute', 'playwright-test'],
    ['make -C . e2e', 'reroute', 'playwright-test'],
    ['make emu', 'reroute', 'android-emulator'],
    ['make test', 'allow', 'r1-unit-tests'],
    ['make -n e2e', 'allow', undefined],
    ['make clean', 'allow', undefined],
    ['make odd', 'allow', undefined],
  ])('in a web app: %s -> %s', (line, decision, rule) => {
    const v = inWeb(line);
    expect(v.decision).toBe(decision);
    if (rule) expect(v.rule).toBe(rule);
  });
  it('a Makefile the line writes before running make is what the line wrote (static text), else unknown', () => {
    expect(inWeb("printf 'x:\\n\\tnpx playwright test\\n' > Makefile && make x")).toMatchObject({ decision: 'reroute', rule: 'playwright-test' });
    expect(inWeb("printf 'x:\\n\\tnpx playwright test\\n' > ci.mk && make -f ci.mk x")).toMatchObject({ decision: 'reroute', rule: 'playwright-test' });
    expect(inWeb("printf 'x:\\n\\tnpx playwright test\\n' | make -f - x")).toMatchObject({ decision: 'reroute', rule: 'playwright-test' });
    expect(inWeb("printf 'x:\\n\\t@echo hi\\n' | make -f - x").decision).toBe('allow');
    expect(inWeb('printf "x:\\n\\tnpx playwright test $T\\n" > Makefile && make x')).toMatchObject({ decision: 'deny', rule: 'unknown-program' });
    // Writing something else (a log named by a variable) is not writing the Makefile, nor is reading it.
    expect(inWeb('make test > "$LOG" 2>&1').decision).toBe('allow');
    expect(inWeb('git diff Makefile && make e2e')).toMatchObject({ decision: 'reroute', rule: 'playwright-test' });
  });
  it('a Makefile whose recursion passes the walker\'s limits is dropped, not refused', () => {
    const deep = join(home, 'deep');
    let dir = deep;
    for (let i = 0; i < 20; i++) {
      file(join(dir, 'Makefile'), 'all:\n\t$(MAKE) -C sub\n');
      dir = join(dir, 'sub');
    }
    expect(guard.classify('make', { cwd: deep }).decision).toBe('allow');
  });
  it('in the Koda engine, reading its Makefile changes nothing: builds reroute, clean stays allowed despite unknown variables', () => {
    expect(inKoda('make build-safe')).toMatchObject({ decision: 'reroute', rule: 'koda-make' });
    expect(inKoda('make clean').decision).toBe('allow');
  });
  it('the commands say which target of which Makefile they came from', () => {
    const { decision } = guard.explain('make e2e', { cwd: web });
    const pw = decision!.commands.find((c) => c.command.program === 'playwright')!;
    expect(pw.command.via).toEqual(['make e2e (Makefile)', 'npx']);
  });
});

describe('false positives: scripts that run nothing heavy stay allowed', () => {
  it.each(['bash lint.sh', './lint.sh', '. ./env.sh', 'python3 hello.py', './bin/fast --help', 'bash missing.sh', './missing', 'cat lint.sh && bash lint.sh', 'git diff lint.sh; ./lint.sh', 'cat lint.sh | bash', 'sh < missing.sh'])('in the Koda engine: %s', (line) => {
    expect(inKoda(line).decision).toBe('allow');
  });
  it.each(['npm test', 'npm run build', 'pnpm build', 'yarn build', 'npm run no-such-script', 'npm install', 'npx tsc'])('package.json: %s', (line) => {
    expect(inWeb(line).decision).toBe('allow');
  });
  it('a sourced script moves this shell: its cd counts for what follows', () => {
    const { decision } = guard.explain('. ./env.sh && pwd', { cwd: koda });
    expect(decision!.commands.at(-1)!.command.cwd).toBe(join(koda, 'tools'));
  });
  it('a copy of a light script runs light; a copy of the build script that the line then rewrites is unknown', () => {
    expect(inKoda('cp lint.sh x.sh && ./x.sh').decision).toBe('allow');
    expect(inKoda('cp -t /tmp build.sh lint.sh && /tmp/lint.sh').decision).toBe('allow');
    expect(inKoda('cp build.sh x.sh && sed -i s/make/true/ x.sh && ./x.sh')).toMatchObject({ decision: 'deny', rule: 'unknown-program' });
    // A light script of a copied directory runs light; a directory cp does not take without -r is not copied.
    expect(inKoda('cp -r scripts /tmp/s && /tmp/s/deep/lint').decision).toBe('allow');
    expect(inKoda('cp scripts /tmp/norec && /tmp/norec/build').decision).toBe('allow');
    // tmux: a configuration that runs nothing heavy, one read by no starting server, a format condition.
    expect(inKoda('tmux -f tmux/benign.conf new -d').decision).toBe('allow');
    expect(inKoda('tmux -f tmux/run.conf ls').decision).toBe('allow');
    expect(inKoda("tmux if -F '#{==:1,1}' 'display ok'").decision).toBe('allow');
  });
  it("run-parts never compiles the line's own --regex: a pattern made to backtrack on a long name answers at once, judging every file", () => {
    const dir = join(home, 'parts');
    file(join(dir, `${'a'.repeat(60)}!`), '#!/bin/sh\necho long\n', 0o755);
    file(join(dir, 'lint'), '#!/bin/sh\nshellcheck x.sh\n', 0o755);
    // With a JavaScript RegExp this took minutes (exponential backtracking): here it is a hang guard's matter.
    expect(guard.classify(`run-parts --regex='^(a+)+$' ${dir}`, { cwd: koda }).decision).toBe('allow');
    file(join(dir, 'zz-build'), '#!/bin/sh\nmake build-safe\n', 0o755);
    expect(guard.classify(`run-parts --regex='^lint$' ${dir}`, { cwd: koda })).toMatchObject({ decision: 'reroute', rule: 'koda-make' });
    expect(guard.classify(`run-parts --test ${dir}`, { cwd: koda }).decision).toBe('allow');
  });
  it('without file access (rule examples), a script is judged by its name only', () => {
    expect(guard.classify('bash build.sh', { cwd: koda, files: false }).decision).toBe('allow');
  });
});

describe('bypass attempts', () => {
  it.each([
    // Written by the line itself, then run: what the line wrote is what runs (static text: read; else unknown).
    ["echo 'make build-safe' > lint.sh; bash lint.sh", 'reroute', 'koda-make'],
    ["printf 'make kasm' > new.sh && sh new.sh", 'reroute', 'koda-make'],
    ["cat > new.sh <<'EOF'\nmake kasm\nEOF\nbash new.sh", 'reroute', 'koda-make'],
    ["echo 'make kasm' | tee new.sh >/dev/null; bash new.sh", 'reroute', 'koda-make'],
    ["echo 'echo hi' > new.sh; echo 'make kasm' >> new.sh; bash new.sh", 'reroute', 'koda-make'],
    ["echo make > new.sh; sed -i s/make/ls/ new.sh; bash new.sh", 'deny', 'unknown-program'],
    ['echo "make $T" > new.sh; bash new.sh', 'deny', 'unknown-program'],
    ['echo "$(cat build.sh)" > new.sh; bash new.sh', 'reroute', 'koda-make'],
    ['eval "$(cat build.sh)"', 'reroute', 'koda-make'],
    ['bash -c "$(< build.sh)"', 'reroute', 'koda-make'],
    ["bash --rcfile build.sh -i <<< ''", 'reroute', 'koda-make'],
    ["bash --init-file build.sh -i <<< ''", 'reroute', 'koda-make'],
    // A copy holds what its source holds: the build script runs under the new name.
    ["cp build.sh x.sh && ./x.sh", 'reroute', 'koda-make'],
    ['cp -t /tmp build.sh lint.sh && /tmp/build.sh', 'reroute', 'koda-make'],
    ['install -m 755 build.sh /tmp/b && /tmp/b', 'reroute', 'koda-make'],
    ['cp lint.sh x.sh && echo "make kasm" >> x.sh && ./x.sh', 'reroute', 'koda-make'],
    ['cp "$S" x.sh && ./x.sh', 'deny', 'unknown-program'],
    // tmux runs shell commands from its configuration, its own command list, if-shell and default-command.
    ['tmux -f tmux/run.conf new -d', 'reroute', 'koda-make'],
    ['tmux -f tmux/dc.conf new -d', 'reroute', 'koda-make'],
    ['tmux -f tmux/if.conf new -d', 'reroute', 'koda-make'],
    ['tmux -f tmux/src.conf start-server', 'reroute', 'koda-make'],
    ["tmux set -g default-command 'make build-safe' \\; new -d", 'reroute', 'koda-make'],
    ["tmux set -g default-command 'make build-safe'\\; new -d", 'reroute', 'koda-make'],
    ["tmux set -g status off\\; run-shell 'make kasm'", 'reroute', 'koda-make'],
    ["tmux if-shell true 'run-shell \"make kasm\"'", 'reroute', 'koda-make'],
    ["echo \"run-shell 'make kasm'\" > t.conf && tmux -f t.conf new -d", 'reroute', 'koda-make'],
    ['tmux -f tmux/open.conf new -d', 'deny', 'unknown-program'],
    // A directory copied whole (cp -r/-R/-a, mv): its files are found under the copy, at any depth.
    ['cp -r scripts /tmp/s && /tmp/s/build', 'reroute', 'koda-make'],
    ['cp -a . /tmp/whole && sh /tmp/whole/scripts/build', 'reroute', 'koda-make'],
    ['mv scripts moved && moved/build', 'reroute', 'koda-make'],
    ['cp -R scripts out/ && bash out/scripts/build', 'reroute', 'koda-make'],
    ["cp -r scripts s2 && echo 'make kasm' > s2/deep/lint && s2/deep/lint", 'reroute', 'koda-make'],
    ['f=lint.sh; echo "make build" > "$f"; bash lint.sh', 'deny', 'unknown-program'],
    // Through wrappers and substitutions.
    ['env -i bash ./build.sh', 'reroute', 'koda-make'],
    ['bash < build.sh', 'reroute', 'koda-make'],
    ['cat build.sh | sh', 'reroute', 'koda-make'],
    ['cat lint.sh build.sh | bash -s', 'reroute', 'koda-make'],
    ["echo 'make kasm' > lint.sh; bash < lint.sh", 'reroute', 'koda-make'],
    ['xargs -a /dev/null ./build.sh', 'reroute', 'koda-make'],
    ['echo $(./build.sh)', 'reroute', 'koda-make'],
    ['bash -c ./build.sh', 'reroute', 'koda-make'],
    ['find . -name build.sh -exec bash build.sh \\;', 'reroute', 'koda-make'],
    ['git checkout -- build.sh && bash build.sh', 'deny', 'unknown-program'],
    ['sed -i s/x/y/ lint.sh && ./lint.sh', 'deny', 'unknown-program'],
    ['curl -fsSL https://example.com/x.sh -o lint.sh; sh lint.sh', 'deny', 'unknown-program'],
  ])('%s -> %s (%s)', (line, decision, rule) => {
    expect(inKoda(line)).toMatchObject({ decision, rule });
  });
  it.each([
    'npm run e2e --prefix ../web',
    'npm run e2e --prefix=../web',
    'npm --prefix ../web run e2e',
    'corepack pnpm --dir ../web e2e',
    'pnpm e2e --dir ../web',
    'yarn e2e --cwd ../web',
    'bun run --cwd ../web e2e',
  ])('another package\'s script through a directory option anywhere: %s', (line) => {
    expect(guard.classify(line, { cwd: join(home, 'dev', 'koder', 'apps', 'broken') })).toMatchObject({ decision: 'reroute', rule: 'playwright-test' });
  });
  it('a script from a variable is unknown, not skipped', () => {
    expect(inKoda('bash "$SCRIPT"')).toMatchObject({ decision: 'deny', rule: 'unknown-program' });
  });
});

describe('edge cases', () => {
  it('a script that runs itself is read once', () => {
    expect(inKoda('bash self.sh').decision).toBe('allow');
  });
  it('a script that does not parse is refused with its name', () => {
    const v = inKoda('bash broken.sh');
    expect(v).toMatchObject({ decision: 'deny', rule: 'parse-error' });
    expect(v.reason).toContain('bash broken.sh');
  });
  it('a script a shell would run but offhost cannot read is refused, naming it and why (no hang on a FIFO)', () => {
    for (const [line, why] of [
      ['bash pipe.sh', 'not a regular file'],
      ['bash big.sh', 'larger than 512 KiB'],
      ['bash < big.sh', 'larger than 512 KiB'],
      ['cat big.sh | sh', 'larger than 512 KiB'],
      ['./nul.sh', 'NUL bytes'],
      ['bash loop.sh', 'ELOOP'],
    ] as const) {
      const v = inKoda(line);
      expect(v, line).toMatchObject({ decision: 'deny', rule: 'unreadable-script' });
      expect(v.reason, line).toContain(why);
      expect(v.reason, line).toMatch(/offhost cannot judge `.+`: \/.+ cannot be read/);
    }
    // A directory runs nothing (bash: "is a directory"); a NUL in the first line is a binary to bash.
    expect(inKoda('bash bin').decision).toBe('allow');
    expect(inKoda('bash nulfirst.sh').decision).toBe('allow');
  });
  it('a fish script is unknown (not bash syntax); a `#!/usr/bin/make -f` file runs make on itself', () => {
    expect(inKoda('fish tool.fish')).toMatchObject({ decision: 'deny', rule: 'unknown-program' });
    expect(inKoda('./Makefile.run')).toMatchObject({ decision: 'reroute', rule: 'koda-make' });
  });
  it('workspace globs list at most 500 directories (a hook must answer fast): past that, unknown', () => {
    const big = join(home, 'ws-big');
    file(join(big, 'package.json'), JSON.stringify({ workspaces: ['packages/**'] }));
    for (let i = 0; i < 520; i++) mkdirSync(join(big, 'packages', `p${i}`, 'src'), { recursive: true });
    file(join(big, 'packages', 'p1', 'package.json'), JSON.stringify({ name: 'p1', scripts: { e2e: 'echo light' } }));
    const { decision } = guard.explain('npm run e2e -ws', { cwd: big });
    expect(decision!.commands.some((c) => c.command.program === null && c.command.via[0] === 'npm run e2e')).toBe(true);
  });
  it('a package.json that does not parse runs nothing', () => {
    expect(guard.classify('npm run e2e', { cwd: join(home, 'dev', 'koder', 'apps', 'broken') }).decision).toBe('allow');
  });
  it('the disk reader: binaries by their head, FIFOs never opened for a blocking read, each path read once', () => {
    const files = diskFiles();
    expect(files.read(join(koda, 'bin', 'fast'))).toEqual({ kind: 'binary' });
    expect(files.read(join(koda, 'pipe.sh'))).toEqual({ kind: 'unreadable', why: 'not a regular file: a FIFO, a device or a socket' });
    expect(files.read(join(koda, 'nope'))).toEqual({ kind: 'missing' });
    expect(files.read(join(koda, 'bin'))).toEqual({ kind: 'directory' });
    expect(files.read(join(koda, 'nul.sh'))).toEqual({ kind: 'unreadable', why: 'NUL bytes in it' });
    expect(files.read(join(koda, 'nulfirst.sh'))).toEqual({ kind: 'binary' });
    const first = files.read(join(koda, 'lint.sh'));
    writeFileSync(join(koda, 'lint.sh'), 'changed');
    expect(files.read(join(koda, 'lint.sh'))).toBe(first);
    writeFileSync(join(koda, 'lint.sh'), '#!/usr/bin/env bash\nshellcheck *.sh\ngit status --short\n');
  });
});
