// The conventions an ESLint user expects of check, explain and hook, through the built CLI in a child
// process, in the sample checkout (fixtures/sample-checkout, root: .): `--format json` (`-f`), `--stdin`
// (the line from standard input), `--debug` (a trace on stderr that changes nothing else).
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const BIN = resolve('dist/offhost.cjs');
const SAMPLE = resolve('fixtures/sample-checkout');
const KODA = join(SAMPLE, 'engines/lang/koda');
const tmp = mkdtempSync(join(tmpdir(), 'offhost-conventions-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const baseEnv = { PATH: process.env.PATH, HOME: join(tmp, 'home'), XDG_CONFIG_HOME: join(tmp, 'xdg') };

function offhost(args: string[], opts: { cwd?: string; input?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? KODA, env: { ...baseEnv, ...opts.env }, encoding: 'utf8', input: opts.input ?? '' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('--format', () => {
  it('check: json (also -f json and --json) is the verdict object; stylish is the default text', () => {
    const json = offhost(['check', '--format', 'json', 'make build-safe']);
    expect(json.status).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ decision: 'reroute', rule: 'koda-make', route: { vm: 's.khost1.dev-linux-koda', cwd: KODA } });
    expect(offhost(['check', '-f', 'json', 'make build-safe']).stdout).toBe(json.stdout);
    expect(offhost(['check', '--format=json', 'make build-safe']).stdout).toBe(json.stdout);
    expect(offhost(['check', '--json', 'make build-safe']).stdout).toBe(json.stdout);
    const text = offhost(['check', '--format', 'stylish', 'make build-safe']);
    expect(text.stdout).toBe(offhost(['check', 'make build-safe']).stdout);
    expect(text.stdout).toMatch(/^reroute \(koda-make\): make build-safe\n/);
  });

  it('explain: json carries every command and the rule that decided it', () => {
    const r = offhost(['explain', '-f', 'json', 'cd .. && make -C koda kasm'], { cwd: KODA });
    expect(r.status).toBe(3);
    const v = JSON.parse(r.stdout) as { decision: string; role: string; commands: { command: { program: string }; rule: string | null; decision: string }[] };
    expect(v).toMatchObject({ decision: 'reroute', rule: 'koda-make', role: 'laptop' });
    expect(v.commands.map((c) => `${c.command.program}:${c.decision}:${c.rule}`).slice(0, 2)).toEqual(['cd:allow:r1-inspection', 'make:reroute:koda-make']);
  });

  it('an unknown format, or --json against another format, is a usage error (2) and prints no verdict', () => {
    for (const args of [['check', '--format', 'xml', 'ls'], ['explain', '-f', 'sarif', 'ls'], ['check', '--json', '--format', 'stylish', 'ls'], ['check', '--format']]) {
      const r = offhost(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
    }
    expect(offhost(['check', '--format', 'xml', 'ls']).stderr).toBe("offhost check: --format must be stylish or json (got 'xml')\n");
  });
});

describe('--stdin', () => {
  it('judges what standard input holds, less one final newline, as the argument would be judged', () => {
    const fromArg = offhost(['check', '-f', 'json', 'make build-safe']);
    const fromStdin = offhost(['check', '--stdin', '-f', 'json'], { input: 'make build-safe\n' });
    expect(fromStdin.status).toBe(3);
    expect(fromStdin.stdout).toBe(fromArg.stdout);
    expect(offhost(['check', '--stdin'], { input: 'qemu-system-x86_64 -hda win10.qcow2' }).status).toBe(1);
    expect(offhost(['check', '--stdin'], { input: 'ls -la\r\n' }).status).toBe(0);
  });

  it('a script of several lines is judged whole: the cd on one line moves the make of the next', () => {
    const r = offhost(['check', '--stdin', '-f', 'json'], { cwd: SAMPLE, input: 'cd engines/lang/koda\nmake build-safe\n' });
    expect(r.status).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ rule: 'koda-make' });
    const e = offhost(['explain', '--stdin'], { cwd: SAMPLE, input: 'echo ok\nqemu-system-x86_64 -hda w.img\n' });
    expect(e.status).toBe(1);
    expect(e.stdout).toContain('deny by qemu-local-vm');
  });

  it('refuses an argument as well, and empty input (2, nothing judged)', () => {
    const both = offhost(['check', '--stdin', 'ls'], { input: 'make build-safe\n' });
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('--stdin reads the command line from standard input: give no COMMAND argument as well');
    for (const input of ['', '\n', '   \n']) {
      const r = offhost(['check', '--stdin'], { input });
      expect(r.status).toBe(2);
      expect(r.stderr).toBe('offhost check: --stdin: standard input held no command line\n');
    }
  });
});

describe('--debug', () => {
  it('check: traces the line, cwd, config files, role and why, the checkout, each rule, the verdict; stdout and status unchanged', () => {
    const plain = offhost(['check', 'make build-safe'], { env: { OFFHOST_ROLE: 'laptop' } });
    const r = offhost(['check', '--debug', 'make build-safe'], { env: { OFFHOST_ROLE: 'laptop' } });
    expect([r.status, r.stdout]).toEqual([plain.status, plain.stdout]);
    expect(plain.stderr).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.every((l) => l.startsWith('offhost debug: '))).toBe(true);
    expect(lines).toEqual([
      'offhost debug: line (from the argument, 15 characters): make build-safe',
      `offhost debug: cwd: ${KODA}`,
      `offhost debug: config files (lowest first): <built-in> < ${join(SAMPLE, 'offhost.config.yaml')}`,
      'offhost debug: role: laptop (from OFFHOST_ROLE)',
      `offhost debug: checkout: root ${SAMPLE}; path variables: {koda}=${KODA}`,
      `offhost debug: command 1: make build-safe (cwd ${KODA}): reroute by koda-make`,
      `offhost debug: command 2: echo this would build the Koda engine (build-safe): on the VM, not here (cwd ${KODA}, inside make build-safe (Makefile)): allow by r1-inspection`,
      expect.stringMatching(/^offhost debug: verdict: reroute \(koda-make\): Koda engine builds/),
    ]);
  });

  it('explain and a role from --role: the source is named', () => {
    const r = offhost(['explain', '--debug', '--role', 'vm', '-f', 'json', 'make build-safe']);
    expect(JSON.parse(r.stdout).role).toBe('vm');
    expect(r.stderr).toContain('offhost debug: role: vm (from --role)\n');
    expect(offhost(['check', '--debug', 'ls']).stderr).toContain('offhost debug: role: laptop (from the default: no --role, OFFHOST_ROLE or config role)\n');
  });

  it('hook: the answer on stdout and the status are the same; stderr traces the event, the guard and the decision', () => {
    const event = JSON.stringify({ session_id: 's', cwd: KODA, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'make build-safe' } });
    const plain = offhost(['hook', 'claude-code'], { input: event });
    const r = offhost(['hook', 'claude-code', '--debug'], { input: event });
    expect([r.status, r.stdout]).toEqual([plain.status, plain.stdout]);
    expect(JSON.parse(r.stdout).hookSpecificOutput.updatedInput.command).toContain("run -- 'make build-safe'");
    expect(r.stderr).toContain(`offhost debug: event (claude-code, ${event.length} characters on stdin): ${event}\n`);
    expect(r.stderr).toContain(`offhost debug: config files (lowest first): <built-in> < ${join(SAMPLE, 'offhost.config.yaml')}\n`);
    expect(r.stderr).toContain(`offhost debug: command 1: make build-safe (cwd ${KODA}): reroute by koda-make\n`);
    expect(r.stderr).toMatch(/offhost debug: verdict: reroute \(koda-make\)/);
    // A tool that runs no command: said so, and the guard is not loaded.
    const read = offhost(['hook', 'claude-code', '--debug'], { input: JSON.stringify({ session_id: 's', cwd: KODA, hook_event_name: 'PreToolUse', tool_name: 'Read', tool_input: { file_path: 'x' } }) });
    expect(read.status).toBe(0);
    expect(read.stderr).toContain('offhost debug: the event runs no command: the guard is not loaded\n');
  });
});

describe('--format json on the status commands (lock status, runs, vm status)', () => {
  // Each command's JSON is the same document whichever spelling asks for it, and a bad kind is a usage error.
  const repo = join(tmp, 'repo');
  spawnSync('git', ['init', '-q', repo]);
  spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'one']);
  const cases: [string, string[]][] = [
    ['lock status', ['lock', 'status']],
    ['runs', ['runs']],
  ];
  it.each(cases)('%s: --format json, -f json and --json print the same JSON; --format xml is exit 2', (_, cmd) => {
    const a = offhost([...cmd, '--format', 'json'], { cwd: repo });
    const b = offhost([...cmd, '-f', 'json'], { cwd: repo });
    const c = offhost([...cmd, '--json'], { cwd: repo });
    expect(a.status, a.stderr).toBe(0);
    const strip = (t: string) => JSON.stringify(JSON.parse(t), (k, v) => (k === 'now' ? undefined : v));
    expect(strip(a.stdout)).toBe(strip(b.stdout));
    expect(strip(a.stdout)).toBe(strip(c.stdout));
    const bad = offhost([...cmd, '--format', 'xml'], { cwd: repo });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--format must be stylish or json/);
  });
  it('vm status: --format json is one JSON report per VM (a template VM, checked without a network)', () => {
    const r = offhost(['vm', 'status', '--format', 'json', 's.khost1.dev-win10'], { cwd: repo });
    const first = JSON.parse(r.stdout.split('\n')[0]!) as { vm: string; checks: unknown[] };
    expect(first.vm).toBe('s.khost1.dev-win10');
    expect(Array.isArray(first.checks)).toBe(true);
  });
});
