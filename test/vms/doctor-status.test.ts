// `offhost doctor` (the laptop side) and `offhost vm status` for a template VM (s.khost1.dev-win10),
// with the built CLI, real files and the seed-003-style win.sh stand-in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standinPath } from '../helpers/standins.js';
import { cleanEnv, configure, ensureBuilt, g, offhost, BIN } from '../locks/lifecycle-helpers.js';
import { hookCommand } from '../../src/adapters/init-agent.js';

let home: string;
let repo: string;
let env: Record<string, string>;
beforeAll(() => {
  ensureBuilt();
  home = mkdtempSync(join(tmpdir(), 'offhost-doctor-'));
  repo = join(home, 'dev', 'koder');
  mkdirSync(repo, { recursive: true });
  g(repo, 'init', '-q', '-b', 'main');
  configure(repo);
  // A repository with a commit, as a user's is (doctor's locks check asks a repository with none to make one).
  g(repo, 'commit', '-q', '--allow-empty', '-m', 'first');
  env = { ...(cleanEnv() as Record<string, string>), HOME: home, PATH: `${standinPath()}:${process.env.PATH}`, OFFHOST_ROLE: 'laptop' };
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const doctor = () => offhost(['doctor'], { cwd: repo, baseEnv: env });
const hook = (node: string, bin: string) =>
  JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash|Monitor|PowerShell|mcp__.*', hooks: [{ type: 'command', command: `'${node}' '${bin}' hook claude-code`, timeout: 30 }] }] } });

describe('offhost doctor', () => {
  it('nothing wired: says what to run, exit 1', async () => {
    const r = await doctor();
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/ok\s+config\s+built-in rules only/);
    expect(r.stdout).toMatch(/FIX\s+agents\s+no agent hook calls offhost/);
    expect(r.stdout).toContain('offhost init --agent claude-code');
    expect(r.stdout).toMatch(/FIX\s+husky\s+\.husky\/pre-commit does not run offhost's lock checks/);
  });
  it('a hook calling a node that is gone is named, with the fix', async () => {
    mkdirSync(join(repo, '.claude'), { recursive: true });
    writeFileSync(join(repo, '.claude', 'settings.json'), hook('/opt/node-18.0.0/bin/node', BIN));
    const r = await doctor();
    expect(r.code).toBe(1);
    // Run as Claude Code runs it: the heavy call is not blocked (sh cannot find that node: status 127, which Claude Code lets through).
    expect(r.stdout).toMatch(/FIX\s+agents\s+claude-code: .claude\/settings.json .*`qemu-system-x86_64 -hda win10.qcow2` was not blocked through it \(status 127: .*\/opt\/node-18.0.0\/bin\/node/);
    expect(r.stdout).toContain('run `offhost init --agent claude-code`');
  });
  it('a hook written as /bin/sh -c \'…\' (Codex, Cursor, Windsurf) is looked inside', async () => {
    const inner = `'/opt/node-16.0.0/bin/node' '${BIN}' hook claude-code || exit 2`;
    const settings = { hooks: { PreToolUse: [{ matcher: 'Bash|Monitor|PowerShell|mcp__.*', hooks: [{ type: 'command', command: `/bin/sh -c "${inner}"`, timeout: 30 }] }] } };
    writeFileSync(join(repo, '.claude', 'settings.json'), JSON.stringify(settings));
    const r = await doctor();
    expect(r.code).toBe(1);
    // Its `|| exit 2` blocks the heavy call, and every other one too.
    expect(r.stdout).toMatch(/FIX\s+agents\s+claude-code: .*`ls` was refused through it \(status 2: .*\/opt\/node-16.0.0\/bin\/node: not found\): every command is refused/);
    writeFileSync(join(repo, '.claude', 'settings.json'), hook('/opt/node-18.0.0/bin/node', BIN));
  });
  it('a shell rc file calling an offhost that moved is named, with the fix', async () => {
    writeFileSync(join(home, '.bashrc'), `# offhost\n__offhost_cmd=('${process.execPath}' '/opt/old/offhost/dist/offhost.cjs')\n`);
    try {
      const r = await doctor();
      expect(r.stdout).toMatch(/FIX\s+shell\s+.*\.bashrc \(bash, loaded by ~\/\.bashrc\) runs .*\/opt\/old\/offhost\/dist\/offhost\.cjs, which did not refuse `qemu-system-x86_64 -hda win10.qcow2`/);
      expect(r.stdout).toContain('offhost init --shell bash');
    } finally {
      rmSync(join(home, '.bashrc'));
    }
  });
  it('a wired hook and pre-commit pass; a broken config is reported with its file and line', async () => {
    mkdirSync(join(repo, '.claude'), { recursive: true });
    // A bare call works, but has no watchdog: a hang would let the tool run at the agent's timeout.
    writeFileSync(join(repo, '.claude', 'settings.json'), hook(process.execPath, BIN));
    const bare = await doctor();
    expect(bare.stdout).toMatch(/FIX\s+agents\s+claude-code: .claude\/settings.json holds a hook command without offhost's watchdog/);
    // The command init writes, with this node and this build.
    const wired = hookCommand('claude-code', repo, [], { projectBin: null, node: process.execPath, bin: BIN }).command;
    writeFileSync(join(repo, '.claude', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash|Monitor|PowerShell|mcp__.*', hooks: [{ type: 'command', command: wired, timeout: 30 }] }] } }));
    mkdirSync(join(repo, '.husky'), { recursive: true });
    writeFileSync(join(repo, '.husky', 'pre-commit'), 'npx lint-staged\noffhost lint --staged\n');
    g(repo, 'config', 'core.hooksPath', '.husky/_');
    let r = await doctor();
    expect(r.stdout, r.stdout).toMatch(/ok\s+agents\s+claude-code: .claude\/settings.json: blocks `qemu-system-x86_64 -hda win10.qcow2`, lets `ls` through/);
    expect(r.stdout).toMatch(/ok\s+husky/);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain('nothing to fix on this laptop');
    writeFileSync(join(repo, 'offhost.config.yaml'), 'vms:\n  - { id: s.khost1.flow, backend: ssh, host: khost1 }\n');
    try {
      r = await doctor();
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/FIX\s+config .*offhost\.config\.yaml:2:\d+: vms\.0\.id: a test VM id is s\.<host>/);
    } finally {
      rmSync(join(repo, 'offhost.config.yaml'));
    }
  });
});

describe('offhost vm status for the Windows VM (template backend)', () => {
  it('win.sh present: the probe runs through it and the declared tools are found', async () => {
    const r = await offhost(['vm', 'status', 's.khost1.dev-win10'], { cwd: repo, baseEnv: env });
    expect(r.stdout).toMatch(/ok\s+guest\s+s\.khost1\.dev-win10 runs commands/);
    expect(r.stdout).toMatch(/ok\s+tools\s+on the guest's PATH: bash git/);
  });
  it('win.sh missing: exit 69 with the set-up pointer (seed 003: never a silent skip)', async () => {
    const r = await offhost(['vm', 'status', 's.khost1.dev-win10'], { cwd: repo, baseEnv: { ...env, PATH: '/usr/bin:/bin' } });
    expect(r.code).toBe(69);
    expect(r.stdout).toContain('`win.sh` is not on this machine\'s PATH');
    expect(r.stdout).toContain('docs/VMS.md');
  });
  it('the qemu-windows refusal points at the VM and its status command', async () => {
    const r = await offhost(['check', 'qemu-system-x86_64 -m 8G -hda win10.qcow2'], { cwd: repo, baseEnv: env });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('offhost vm status s.khost1.dev-win10');
  });
});

describe('offhost vm: usage and ids', () => {
  it('--json prints one report per VM; an id on a host no VM lives on is refused (2)', async () => {
    const r = await offhost(['vm', 'status', '--json', 's.khost1.dev-win10'], { cwd: repo, baseEnv: env });
    const rep = JSON.parse(r.stdout.trim());
    expect(rep.vm).toBe('s.khost1.dev-win10');
    expect(rep.checks.map((c: { name: string }) => c.name)).toEqual(['laptop tool', 'guest', 'disk', 'tools']);
    const bad = await offhost(['vm', 'status', 's.khost9.dev-linux-koda'], { cwd: repo, baseEnv: env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("names host 'khost9', which no VM of the configuration lives on");
  });
  it('no subcommand is a usage error; --help prints the usage', async () => {
    expect((await offhost(['vm'], { cwd: repo, baseEnv: env })).code).toBe(2);
    const h = await offhost(['vm', '--help'], { cwd: repo, baseEnv: env });
    expect(h.code).toBe(0);
    expect(h.stdout).toContain('offhost vm provision ID');
  });
});
