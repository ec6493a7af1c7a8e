// The CLI's conventions, ESLint's where they apply, on the built executable (real processes; a real
// pseudo-terminal through script(1) for the colour default): one error line with a suggestion for a
// mistyped option or command, full help for every command, --version listed, colour rules, --max-warnings,
// --quiet, -o FILE, the same format default in every findings command, numbers validated alike.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { missing, titled } from '../helpers/tools.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'dist', 'offhost.cjs');
const ESC = '\u001b[';

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-cli-'));
  // One warning (a directory offhost cannot read statically) and nothing else.
  writeFileSync(join(dir, 'w.sh'), '#!/bin/sh\ncd "$DIR" && make build-safe\n');
  mkdirSync(join(dir, 'home'));
  return dir;
}

function offhost(args: string[], cwd: string, env: Record<string, string | undefined> = {}) {
  const base: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(cwd, 'home'), OFFHOST_ROLE: 'laptop' };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete base[k];
  else base[k] = v;
  return spawnSync(process.execPath, [BIN, ...args], { cwd, env: base, encoding: 'utf8' });
}

const COMMANDS = ['check', 'explain', 'rules', 'lock', 'run', 'lint', 'init', 'uninstall', 'hook', 'shell', 'scan', 'ci'];

describe('errors: one line, with a suggestion', () => {
  const dir = project();
  it.each([
    [['lint', '--stagd'], "offhost lint: unknown option '--stagd' (did you mean --staged?)"],
    [['scan', '--formt', 'json'], "offhost scan: unknown option '--formt' (did you mean --format?)"],
    [['init', '--dry-rn'], "offhost init: unknown option '--dry-rn' (did you mean --dry-run?)"],
    [['check', '--jsn', 'ls'], "offhost check: unknown option '--jsn' (did you mean --json?)"],
    [['explain', '--cdw', '.', 'ls'], "offhost explain: unknown option '--cdw' (did you mean --cwd?)"],
    [['hook', '--mdoe', 'rewrite', 'claude-code'], "offhost hook: unknown option '--mdoe' (did you mean --mode?)"],
    [['chek', 'ls'], "offhost: unknown command 'chek' (did you mean check?); `offhost --help` lists the commands"],
    [['help', 'uninstal'], "offhost: unknown command 'uninstal' (did you mean uninstall?); `offhost --help` lists the commands"],
    [['--verison'], "offhost: unknown option '--verison' (did you mean --version?); `offhost --help` lists the commands"],
    [['rules', 'tset'], "offhost rules: unknown subcommand 'tset' (did you mean test?); `offhost rules --help` lists them"],
    [['scan', '--max-warnings', 'abc'], "offhost scan: --max-warnings must be a whole number from -1, not 'abc'"],
    [['lint', '--max-warnings', '-2'], "offhost lint: --max-warnings must be a whole number from -1, not '-2'"],
    [['ci', '--base', 'HEAD', '--skew', '2m'], "offhost ci: --skew must be a whole number of seconds, not '2m'"],
  ])('%j', (args, line) => {
    const r = offhost(args, dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`${line}\n`);
    expect(r.stdout).toBe('');
  });

  it('no suggestion for a word nothing is close to', () => {
    const r = offhost(['frobnicate'], dir);
    expect(r.stderr).toBe("offhost: unknown command 'frobnicate'; `offhost --help` lists the commands\n");
  });
});

describe('help', () => {
  const dir = project();
  it('offhost --help lists every command, --help and --version', () => {
    const r = offhost(['--help'], dir);
    expect(r.status).toBe(0);
    for (const c of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
    expect(r.stdout).toContain('-V, --version');
    expect(r.stdout).toContain('-h, --help');
    expect(offhost(['--version'], dir).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it.each(COMMANDS)('offhost %s --help: its own usage and its options, exit 0', (c) => {
    const r = offhost([c, '--help'], dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.startsWith(`Usage: offhost ${c}`)).toBe(true);
    // the whole layout, for every command of the table: test/cli/help.test.ts
    expect(r.stdout).toMatch(/^Options:$/m);
    expect(r.stdout).toMatch(/--help/);
    // `offhost help <command>` says the same
    expect(offhost(['help', c], dir).stdout).toBe(r.stdout);
  });

  it("shell --help is offhost's help, not bash's", () => {
    const r = offhost(['shell', '--help'], dir);
    expect(r.stdout).toContain('drop-in $SHELL');
    expect(r.stdout).not.toContain('GNU bash');
  });
});

describe('colour', () => {
  const dir = project();
  const coloured = (env: Record<string, string | undefined>, args: string[] = []) => offhost(['scan', ...args, 'w.sh'], dir, env).stdout.includes(ESC);
  it('not into a pipe by default; FORCE_COLOR forces it, NO_COLOR turns it off, the flags win over both', () => {
    expect(coloured({})).toBe(false);
    expect(coloured({ FORCE_COLOR: '1' })).toBe(true);
    expect(coloured({ FORCE_COLOR: '0' })).toBe(false);
    expect(coloured({}, ['--color'])).toBe(true);
    expect(coloured({ NO_COLOR: '1' }, ['--color'])).toBe(true);
    expect(coloured({ FORCE_COLOR: '1' }, ['--no-color'])).toBe(false);
    expect(coloured({ FORCE_COLOR: '1' }, ['--format', 'json'])).toBe(false);
    expect(offhost(['check', 'ls'], dir, { FORCE_COLOR: '1' }).stdout).toContain(ESC);
    expect(offhost(['check', '--no-color', 'ls'], dir, { FORCE_COLOR: '1' }).stdout).not.toContain(ESC);
  });

  // A pseudo-terminal through script(1) (util-linux).
  const noScript = missing('script');
  it.skipIf(noScript !== null)(titled('on a terminal by default, unless NO_COLOR or TERM=dumb', noScript), () => {
    const inPty = (env: string) => spawnSync('script', ['-qec', `env ${env} ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} scan w.sh`, '/dev/null'], { cwd: dir, env: { PATH: process.env.PATH, HOME: join(dir, 'home'), TERM: 'xterm' }, encoding: 'utf8' }).stdout;
    expect(inPty('X=1')).toContain(ESC);
    expect(inPty('NO_COLOR=1')).not.toContain(ESC);
    expect(inPty('TERM=dumb')).not.toContain(ESC);
  });
});

describe('report options: --max-warnings, --quiet, -o FILE, format default', () => {
  const dir = project();
  it('--max-warnings N fails past N warnings; --quiet shows and counts errors only', () => {
    expect(offhost(['scan', 'w.sh'], dir).status).toBe(0);
    expect(offhost(['scan', '--max-warnings', '1', 'w.sh'], dir).status).toBe(0);
    expect(offhost(['scan', '--max-warnings', '-1', 'w.sh'], dir).status).toBe(0);
    const over = offhost(['scan', '--max-warnings', '0', 'w.sh'], dir);
    expect(over.status).toBe(1);
    expect(over.stderr).toContain('offhost scan: too many warnings (1; --max-warnings 0)');
    const quiet = offhost(['scan', '--quiet', '--max-warnings', '0', 'w.sh'], dir);
    expect(quiet.status).toBe(0);
    expect(quiet.stdout).toBe('');
  });

  it('-o FILE writes the report there and nothing to stdout', () => {
    const r = offhost(['scan', '-f', 'json', '-o', 'report.json', 'w.sh'], dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('');
    expect((JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { ruleId: string }[]).map((f) => f.ruleId)).toEqual(['koda-make']);
  });

  it('lint, scan and ci all default to the github format inside GitHub Actions', () => {
    writeFileSync(join(dir, 'lock-x.md'), '---\nvm: s.khost1.dev-linux-koda\n---\n');
    const lint = offhost(['lint', 'lock-x.md'], dir, { GITHUB_ACTIONS: 'true' });
    expect(lint.stdout).toMatch(/^::error file=lock-x\.md/m);
    expect(offhost(['scan', 'w.sh'], dir, { GITHUB_ACTIONS: 'true' }).stdout).toMatch(/^::warning file=w\.sh/m);
    expect(offhost(['lint', 'lock-x.md'], dir).stdout).not.toContain('::error');
  });
});
