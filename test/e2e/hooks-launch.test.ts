// The hook commands `offhost init --agent` writes, run the way each agent runs them (a shell, the agent's
// project variable, the event JSON on stdin), in a project where offhost is installed the way npm installs
// it (node_modules/offhost + node_modules/.bin/offhost). Then the install is broken every way a user breaks
// it, and each agent must get its blocking answer, never a status it treats as "carry on".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { quote as shellQuote } from 'shell-quote';
import { type FakeHome, BIN, ROOT, event, fakeHome, hookCommand, hookEnv, requireBuild } from './hooks-helpers.js';

let h: FakeHome;
const made: string[] = [];
beforeAll(() => {
  requireBuild();
  h = fakeHome();
  made.push(h.home);
});
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A git project with offhost installed: node_modules/offhost -> this checkout, .bin/offhost -> its dist/offhost.cjs. */
function installedProject(name?: string): string {
  let d = mkdtempSync(join(tmpdir(), 'offhost-launch-'));
  made.push(d);
  if (name) {
    d = join(d, name);
    mkdirSync(d);
  }
  spawnSync('git', ['init', '-q'], { cwd: d });
  mkdirSync(join(d, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(d, 'node_modules', 'offhost'));
  symlinkSync('../offhost/dist/offhost.cjs', join(d, 'node_modules', '.bin', 'offhost'));
  return d;
}

function init(project: string, agent: string): void {
  const r = spawnSync(process.execPath, [BIN, 'init', '--agent', agent], { cwd: project, env: hookEnv(h), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`init --agent ${agent}: ${r.stderr}`);
}

/** Each agent's documented MCP event naming `command` (Codex: an MCP tool reported as mcp__server__tool). */
function mcpEvent(agent: string, command: string, cwd: string): string | null {
  switch (agent) {
    case 'cursor':
      return JSON.stringify({ hook_event_name: 'beforeMCPExecution', conversation_id: 'c1', generation_id: 'g1', workspace_roots: [cwd], tool_name: 'run', tool_input: JSON.stringify({ command }), command: 'npx mcp-shell' });
    case 'windsurf':
      return JSON.stringify({ agent_action_name: 'pre_mcp_tool_use', trajectory_id: 'tr1', execution_id: 'e1', timestamp: '2026-01-01T00:00:00Z', tool_info: { mcp_server_name: 'shell', mcp_tool_name: 'run', mcp_tool_arguments: { command } } });
    case 'codex':
      return JSON.stringify({ session_id: 's1', turn_id: 't', transcript_path: null, cwd, hook_event_name: 'PreToolUse', model: 'gpt-5', permission_mode: 'default', tool_name: 'mcp__shell__run', tool_input: { command }, tool_use_id: 'c' });
  }
  return null;
}

/** Runs the hook command as the agent does: a shell in the project, the agent's project variable set. */
function runAs(agent: string, project: string, command: string, input: string, env: Record<string, string> = hookEnv(h), login = agent === 'codex') {
  const vars: Record<string, string> = agent === 'claude-code' ? { CLAUDE_PROJECT_DIR: project } : agent === 'gemini' ? { GEMINI_PROJECT_DIR: project } : {};
  // Codex runs `$SHELL -lc COMMAND`; Gemini CLI `bash -c` after replacing the text `$GEMINI_PROJECT_DIR` with
  // the shell-quote'd directory (packages/core/src/hooks/hookRunner.ts expandCommand); the others a POSIX shell -c.
  const argv = login
    ? ['/bin/sh', '-lc', command]
    : agent === 'gemini'
      ? ['/bin/bash', '-c', command.replace(/\$GEMINI_PROJECT_DIR/g, () => shellQuote([project]))]
      : ['/bin/sh', '-c', command];
  const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: project, input, env: { ...env, ...vars }, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Did the agent get a block? Each agent's own rule (see src/adapters/*.ts for the sources). */
function blocked(agent: string, r: { status: number | null; stdout: string; stderr: string }): boolean {
  const out = r.stdout.trim() ? (() => { try { return JSON.parse(r.stdout.trim().split('\n')[0] as string); } catch { return null; } })() : null;
  switch (agent) {
    case 'claude-code':
      return (r.status === 2 && r.stderr.trim() !== '') || (r.status === 0 && out?.hookSpecificOutput?.permissionDecision === 'deny');
    case 'gemini':
      return r.status === 2 || (r.status === 0 && (out?.decision === 'deny' || out?.decision === 'block'));
    case 'windsurf':
      return r.status === 2 && r.stderr.trim() !== '';
    case 'codex':
      // exit 2 blocks only with a reason on stderr (codex-rs/hooks/src/events/pre_tool_use.rs)
      return (r.status === 2 && r.stderr.trim() !== '') || (r.status === 0 && out?.hookSpecificOutput?.permissionDecision === 'deny');
    case 'cursor':
      return r.status === 2 || (r.status === 0 && out?.permission === 'deny');
    case 'copilot':
      return r.status === 0 && out?.permissionDecision === 'deny';
  }
  return false;
}

const AGENTS = ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf'];

describe('a door that cannot start offhost blocks', () => {
  for (const agent of AGENTS) {
    it(`${agent}: the written command answers, and blocks once the install is deleted, half-built or node is gone`, () => {
      const p = installedProject();
      init(p, agent);
      const command = hookCommand(p, agent);
      expect(command).not.toContain(p);
      expect(command).toContain(`offhost hook ${agent}`);
      // Installed: an allowed command passes, a heavy one is stopped (or rewritten).
      const ok = runAs(agent, p, command, event(agent, 'ls', h.koda));
      expect(ok.status, ok.stderr).toBe(0);
      expect(blocked(agent, ok)).toBe(false);
      const qemu = runAs(agent, p, command, event(agent, 'qemu-system-x86_64 -hda win10.qcow2', h.koda));
      expect(blocked(agent, qemu), JSON.stringify(qemu)).toBe(true);

      // node missing from PATH (a Node upgrade, another machine): the shebang's `env node` fails (127).
      const noNode = mkdtempSync(join(tmpdir(), 'offhost-nonode-'));
      made.push(noNode);
      symlinkSync('/usr/bin/git', join(noNode, 'git'));
      // Not as a login shell: this machine's /etc/profile would put /usr/bin (and its node) back on PATH.
      const r1 = runAs(agent, p, command, event(agent, 'make build-safe', h.koda), { ...hookEnv(h), PATH: noNode }, false);
      expect(blocked(agent, r1), JSON.stringify(r1)).toBe(true);
      expect(r1.stderr).toContain(`offhost hook ${agent} could not run (status 127)`);

      // dist/ half there (a build in progress deletes dist/ first): the loader is there, its bundle is not.
      rmSync(join(p, 'node_modules', 'offhost'));
      mkdirSync(join(p, 'node_modules', 'offhost', 'dist'), { recursive: true });
      copyFileSync(join(ROOT, 'dist', 'offhost.cjs'), join(p, 'node_modules', 'offhost', 'dist', 'offhost.cjs'));
      const r2 = runAs(agent, p, command, event(agent, 'make build-safe', h.koda));
      expect(blocked(agent, r2), JSON.stringify(r2)).toBe(true);
      expect(r2.stderr).toContain(`offhost hook ${agent} could not run`);

      // rm -rf node_modules
      rmSync(join(p, 'node_modules'), { recursive: true, force: true });
      const r3 = runAs(agent, p, command, event(agent, 'make build-safe', h.koda));
      expect(blocked(agent, r3), JSON.stringify(r3)).toBe(true);
      expect(r3.stderr).toContain('npm ci');
    });
  }

});

/**
 * How the agent starts the command is not ours to choose: Codex runs `$SHELL -lc COMMAND` (the user's login
 * shell: bash, zsh or fish), Cursor and Windsurf document only "shell commands" (a shell, or a runner that
 * splits the string shell-style and execs it). The command must answer, and block once the install is
 * gone, under every one of those.
 */
describe('the hook command under every shell (and none) the agent may start it with', () => {
  const PY_ARGV = 'import os, shlex, subprocess, sys\nos.environ["PATH"] = os.environ.pop("CHILD_PATH", os.environ["PATH"])\nsys.exit(subprocess.run(shlex.split(sys.argv[1])).returncode)';
  const python = spawnSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).stdout.trim();
  type Runner = { name: string; run: (command: string) => string[]; login?: boolean };
  const runners = (agent: string): Runner[] => {
    const flag = agent === 'codex' ? '-lc' : '-c';
    // Claude Code: sh -c (documented), bash or zsh (the shells it picks); the POSIX form, no wrapper.
    const shells = agent === 'claude-code' ? ['/bin/sh', '/bin/bash', '/usr/bin/zsh'] : ['/bin/sh', '/bin/bash', '/usr/bin/zsh', '/usr/bin/fish'];
    return [
      ...shells.map((sh) => ({ name: `${sh} ${flag}`, run: (c: string) => [sh, flag, c] })),
      // No shell at all: split the way shlex splits, exec the words.
      ...(agent === 'codex' || agent === 'claude-code' ? [] : [{ name: 'argv (shlex split, exec, no shell)', run: (c: string) => [python, '-c', PY_ARGV, c] }]),
    ];
  };
  const run = (argv: string[], project: string, input: string, env: Record<string, string>) => {
    const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: project, input, env: { CLAUDE_PROJECT_DIR: project, ...env }, encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  for (const agent of ['claude-code', 'codex', 'cursor', 'windsurf']) {
    it(`${agent}: answers and then blocks under ${runners(agent).map((r) => r.name.split(' ')[0]?.replace(/^.*\//, '')).join(', ')}`, () => {
      const p = installedProject();
      init(p, agent);
      const command = hookCommand(p, agent);
      for (const r of runners(agent)) {
        const env = { ...hookEnv(h), SHELL: r.run('x')[0] as string };
        const ok = run(r.run(command), p, event(agent, 'ls', h.koda), env);
        expect(ok.status, `${r.name}: ${ok.stderr}`).toBe(0);
        expect(blocked(agent, ok), r.name).toBe(false);
        const qemu = run(r.run(command), p, event(agent, 'qemu-system-x86_64 -hda win10.qcow2', h.koda), env);
        expect(blocked(agent, qemu), `${r.name}: ${JSON.stringify(qemu)}`).toBe(true);
      }
      // node missing from PATH (not as a login shell: this machine's profile puts /usr/bin back).
      const noNode = mkdtempSync(join(tmpdir(), 'offhost-nonode-'));
      made.push(noNode);
      symlinkSync('/usr/bin/git', join(noNode, 'git'));
      for (const r of runners(agent)) {
        const argv = r.run(command).map((w) => (w === '-lc' ? '-c' : w));
        const env = { ...hookEnv(h), SHELL: argv[0] as string, ...(argv[0] === python ? { CHILD_PATH: noNode } : { PATH: noNode }) };
        const gone = run(argv, p, event(agent, 'make build-safe', h.koda), env);
        expect(blocked(agent, gone), `${r.name}: ${JSON.stringify(gone)}`).toBe(true);
        expect(gone.stderr, r.name).toContain(`offhost hook ${agent} could not run (status 127)`);
      }
      rmSync(join(p, 'node_modules'), { recursive: true, force: true });
      for (const r of runners(agent)) {
        const env = { ...hookEnv(h), SHELL: r.run('x')[0] as string };
        const gone = run(r.run(command), p, event(agent, 'make build-safe', h.koda), env);
        expect(blocked(agent, gone), `${r.name}: ${JSON.stringify(gone)}`).toBe(true);
        expect(gone.stderr, r.name).toContain('npm ci');
        // The MCP event (the same command serves it) blocks the same way.
        const mcp = mcpEvent(agent, 'make build-safe', h.koda);
        if (mcp) expect(blocked(agent, run(r.run(command), p, mcp, env)), r.name).toBe(true);
      }
    });
  }

  it('the POSIX form alone (what Codex wrote before) is not run by fish at all: fish 3 exits 0 on the parse error, so Codex would run the tool', () => {
    const p = installedProject();
    init(p, 'codex');
    // The script inside the wrapper, as sh reads the quoted word.
    const inner = spawnSync('/bin/sh', ['-c', `printf %s ${hookCommand(p, 'codex').replace(/^\/bin\/sh -c /, '')}`], { encoding: 'utf8' }).stdout;
    expect(inner).toMatch(/^exec 3<&0; "\$\(git rev-parse --show-toplevel\)"\/node_modules\/\.bin\/offhost hook codex <&3 /);
    rmSync(join(p, 'node_modules'), { recursive: true, force: true });
    const bare = run(['/usr/bin/fish', '-c', inner], p, event('codex', 'make build-safe', h.koda), hookEnv(h));
    expect(bare.status).toBe(0);
    expect(bare.stderr).toContain('fish:');
    expect(blocked('codex', bare)).toBe(false);
    const wrapped = run(['/usr/bin/fish', '-c', hookCommand(p, 'codex')], p, event('codex', 'make build-safe', h.koda), hookEnv(h));
    expect(blocked('codex', wrapped), JSON.stringify(wrapped)).toBe(true);
  });

  it('cursor, windsurf: a runner that split the command on spaces (no quote handling) would block every call (sh exits 2 on the broken quote), never let one through', () => {
    for (const agent of ['cursor', 'windsurf']) {
      const p = installedProject();
      init(p, agent);
      const words = hookCommand(p, agent).split(/\s+/);
      const r = run(words, p, event(agent, 'ls', h.koda), hookEnv(h));
      expect(r.status, JSON.stringify(r)).toBe(2);
      expect(blocked(agent, r)).toBe(true);
    }
  });
});

describe('a door that cannot start offhost blocks (symlinks, OpenCode)', () => {
  it('a project path with a space, an @ and a quote: every agent\'s command still answers (Gemini quotes its variable into the text)', () => {
    for (const agent of ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf']) {
      const p = installedProject("my proj @work 'x'");
      init(p, agent);
      const command = hookCommand(p, agent);
      const ok = runAs(agent, p, command, event(agent, 'ls', h.koda));
      expect(ok.status, `${agent}: ${ok.stderr}`).toBe(0);
      expect(blocked(agent, ok), agent).toBe(false);
      const qemu = runAs(agent, p, command, event(agent, 'qemu-system-x86_64 -hda win10.qcow2', h.koda));
      expect(qemu.stderr, agent).not.toContain('could not run');
      expect(blocked(agent, qemu), `${agent}: ${JSON.stringify(qemu)}`).toBe(true);
    }
  });

  it('gemini started in a subdirectory (GEMINI_PROJECT_DIR and the cwd are that subdirectory): the hook still finds offhost and answers', () => {
    const p = installedProject();
    init(p, 'gemini');
    const command = hookCommand(p, 'gemini');
    const sub = join(p, 'packages', 'app');
    mkdirSync(sub, { recursive: true });
    // As Gemini's hookRunner runs it: cwd and GEMINI_PROJECT_DIR = the session's cwd, the bare variable replaced in the text.
    const asGemini = (input: string) => {
      const r = spawnSync('/bin/bash', ['-c', command.replace(/\$GEMINI_PROJECT_DIR/g, () => shellQuote([sub]))], { cwd: sub, input, env: { ...hookEnv(h), GEMINI_PROJECT_DIR: sub }, encoding: 'utf8', timeout: 30_000 });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const ok = asGemini(event('gemini', 'ls', sub));
    expect(ok.status, ok.stderr).toBe(0);
    expect(blocked('gemini', ok)).toBe(false);
    const heavy = asGemini(event('gemini', 'qemu-system-x86_64 -hda win10.qcow2', sub));
    expect(heavy.stderr).not.toContain('could not run');
    expect(blocked('gemini', heavy), JSON.stringify(heavy)).toBe(true);
  });

  it('claude-code through a symlinked checkout: "$CLAUDE_PROJECT_DIR" is the symlink, the hook still answers', () => {
    const p = installedProject();
    const link = join(mkdtempSync(join(tmpdir(), 'offhost-launch-link-')), 'proj');
    made.push(join(link, '..'));
    symlinkSync(p, link);
    init(link, 'claude-code');
    const command = hookCommand(link, 'claude-code');
    const r = runAs('claude-code', link, command, event('claude-code', 'make build-safe', h.koda));
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('ask');
  });

  it('the OpenCode plugin throws (blocks) when offhost is gone, and answers when it is there', async () => {
    const p = installedProject();
    init(p, 'opencode');
    const file = join(p, '.opencode', 'plugins', 'offhost.js');
    const src = readFileSync(file, 'utf8');
    expect(src).not.toContain(p);
    writeFileSync(join(p, 'package.json'), '{"type":"module"}');
    const env = hookEnv(h);
    const call = async (tool: string, args: Record<string, unknown>, extra: Record<string, string> = {}) => {
      const saved = { ...process.env };
      Object.assign(process.env, env, extra);
      try {
        const mod = await import(`${file}?v=${Math.random()}`);
        const hooks = await mod.Offhost({ directory: h.koda, worktree: p });
        const output = { args: { ...args } };
        try {
          await hooks['tool.execute.before']({ tool, sessionID: 'ses_1', callID: 'call_1' }, output);
          return { ok: true, args: output.args };
        } catch (err) {
          return { ok: false, message: (err as Error).message };
        }
      } finally {
        process.env = saved;
      }
    };
    expect(await call('bash', { command: 'ls', description: 'list' })).toEqual({ ok: true, args: { command: 'ls', description: 'list' } });
    const heavy = await call('bash', { command: 'make build-safe', description: 'build' });
    expect(heavy.ok).toBe(true);
    expect(String((heavy as { args?: Record<string, unknown> }).args?.command)).toMatch(/^env OFFHOST_SESSION=opencode-ses_1 OFFHOST_AI=opencode .*run .*-- 'make build-safe'$/);
    expect(await call('bash', { command: 'qemu-system-x86_64 -hda win10.qcow2' })).toMatchObject({ ok: false, message: expect.stringContaining('offhost refused this command') });
    expect(await call('read', { filePath: '/etc/hosts' })).toMatchObject({ ok: true });
    // The batch tool runs its nested calls without the plugin hook seeing them: offhost reads them in the batch's own call.
    expect(await call('batch', { tool_calls: [{ tool: 'read', parameters: { filePath: '/etc/hosts' } }, { tool: 'bash', parameters: { command: 'make build-safe' } }] })).toMatchObject({
      ok: false,
      message: expect.stringContaining('as a bash call of its own, not inside a batch'),
    });
    expect(await call('batch', { tool_calls: [{ tool: 'bash', parameters: { command: 'ls' } }] })).toMatchObject({ ok: true });
    // node missing from PATH: offhost's `#!/usr/bin/env node` fails (127, or EPIPE on its stdin first), the plugin throws
    const noNode = mkdtempSync(join(tmpdir(), 'offhost-nonode-'));
    made.push(noNode);
    expect(await call('bash', { command: 'make build-safe' }, { PATH: noNode })).toMatchObject({ ok: false, message: expect.stringContaining('could not run (') });
    rmSync(join(p, 'node_modules'), { recursive: true, force: true });
    expect(await call('bash', { command: 'make build-safe' })).toMatchObject({ ok: false, message: expect.stringContaining('could not run') });
  });
});
