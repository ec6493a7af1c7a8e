// End to end, the way the agents do it: the hook runs as a child process with the event JSON on stdin (fresh
// process per call); what it returns is then executed through real bash with stand-in `ssh`/`incus` first on
// PATH. The heavy tool (a fake `make` that logs argv, cwd and whether it saw the laptop's environment) must
// run "on the VM" (through incus exec, in the VM's fresh environment) with the right argv and cwd, and never
// on the laptop.
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { readStandinLog, standinEnv } from '../helpers/standins.js';
import { type FakeHome, fakeHome, hookEnv, initMonorepo, offhostOnPath, requireBuild, runHook } from './hooks-helpers.js';

let h: FakeHome;
let offhostDir: string;
beforeAll(() => {
  requireBuild();
  h = fakeHome();
  initMonorepo(h);
  offhostDir = offhostOnPath(h);
});

const makeRuns = () => {
  try {
    return readFileSync(h.localLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { argv: string[]; cwd: string; laptop: boolean });
  } catch {
    return [];
  }
};

/** Runs a command line the way the agent's Bash tool would: bash -c, in cwd, laptop environment. */
function agentRuns(command: string, cwd: string, log: string) {
  const env = standinEnv({ log, home: h.home, extraPath: [offhostDir, h.localBin], env: { OFFHOST_ROLE: 'laptop', LAPTOP_MARKER: '1', OFFHOST_AUDIT_LOG: h.audit } });
  return spawnSync('bash', ['-c', command], { cwd, env, encoding: 'utf8', timeout: 60_000 });
}

function event(agent: 'claude-code' | 'codex' | 'gemini', command: string, cwd: string, extra: Record<string, unknown> = {}) {
  if (agent === 'gemini') {
    return JSON.stringify({ session_id: 'g-1', transcript_path: '/tmp/t', cwd, hook_event_name: 'BeforeTool', timestamp: new Date().toISOString(), tool_name: 'run_shell_command', tool_input: { command, ...extra } });
  }
  return JSON.stringify({ session_id: 'sess-1', transcript_path: '/tmp/t', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command, ...extra }, tool_use_id: 'tu-1' });
}

function expectRanOnVm(log: string, before: number) {
  const runs = makeRuns().slice(before);
  expect(runs, 'the heavy tool ran exactly once').toHaveLength(1);
  expect(runs[0]).toEqual({ argv: ['build-safe'], cwd: h.koda, laptop: false });
  const entries = readStandinLog(log);
  const incus = entries.find((e) => e.tool === 'incus' && e.instance === 'dev-linux-koda');
  expect(incus, `incus exec dev-linux-koda in ${JSON.stringify(entries)}`).toBeTruthy();
  expect(entries.some((e) => e.tool === 'ssh')).toBe(true);
}

describe('hook output executed through bash with stand-in ssh/incus', () => {
  it('control: without the hook the fake make runs on the laptop (the marker works)', () => {
    const before = makeRuns().length;
    const r = agentRuns('make build-safe', h.koda, join(h.home, 'control.log'));
    expect(r.status).toBe(0);
    expect(makeRuns().slice(before)).toEqual([{ argv: ['build-safe'], cwd: h.koda, laptop: true }]);
  });

  it('claude-code (rewrite): updatedInput.command runs make on the VM, with the session in the lock', () => {
    const r = runHook('claude-code', event('claude-code', 'make build-safe', h.koda, { description: 'build' }), hookEnv(h));
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe('ask');
    expect(out.updatedInput.description).toBe('build');
    expect(out.updatedInput.command).toContain('OFFHOST_SESSION=claude-sess-1');
    const log = join(h.home, 'claude.log');
    const before = makeRuns().length;
    const run = agentRuns(out.updatedInput.command, h.koda, log);
    expect(run.status, run.stderr).toBe(0);
    expectRanOnVm(log, before);
    // The VM lock was taken and released in this agent session's name (commits on the lock ref).
    const gitLog = spawnSync('git', ['log', '--format=%s', 'refs/offhost/locks'], { cwd: join(h.home, 'dev', 'koder'), encoding: 'utf8' }).stdout;
    expect(gitLog).toMatch(/s\.khost1\.dev-linux-koda.*claude-sess-1/);
  });

  it('codex (suggest): the command in the deny reason runs make on the VM', () => {
    // Codex sends its shell tool's argv joined (shlex_join); `-c`, not `-lc`, here only because a login
    // shell on this test machine resets PATH from /etc/profile and would not find the fake make.
    const r = runHook('codex', event('codex', "bash -c 'make build-safe'", h.koda), hookEnv(h));
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe('deny');
    const command = String(out.permissionDecisionReason).split('\n').at(-1) as string;
    expect(command).toMatch(/^env OFFHOST_SESSION=codex-sess-1 OFFHOST_AI=codex /);
    // The agent then runs the suggested command as its next tool call: the hook must let it through.
    const again = runHook('codex', event('codex', command, h.koda), hookEnv(h));
    expect(again).toMatchObject({ status: 0, stdout: '' });
    const log = join(h.home, 'codex.log');
    const before = makeRuns().length;
    const run = agentRuns(command, h.koda, log);
    expect(run.status, run.stderr).toBe(0);
    expectRanOnVm(log, before);
  });

  it('gemini (rewrite, dir_path): tool_input.command runs make on the VM in the right directory', () => {
    const root = join(h.home, 'dev', 'koder');
    const r = runHook('gemini', event('gemini', 'make build-safe', root, { dir_path: 'engines/lang/koda' }), hookEnv(h));
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.hookSpecificOutput.tool_input.dir_path).toBe('engines/lang/koda');
    const log = join(h.home, 'gemini.log');
    const before = makeRuns().length;
    const run = agentRuns(out.hookSpecificOutput.tool_input.command, h.koda, log);
    expect(run.status, run.stderr).toBe(0);
    expectRanOnVm(log, before);
  });

  it('every refusal and reroute went to the audit log (allows are not recorded by default)', () => {
    const lines = readFileSync(h.audit, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const hooks = lines.filter((l) => l.agent !== 'shell');
    expect(hooks.map((l) => [l.agent, l.decision, l.rule])).toEqual([
      ['claude-code', 'reroute', 'koda-make'],
      ['codex', 'reroute', 'koda-make'],
      ['gemini', 'reroute', 'koda-make'],
    ]);
    expect(hooks[0]).toMatchObject({ session: 'claude-sess-1', cwd: h.koda, command: 'make build-safe', mode: 'rewrite' });
  });
});

describe('a script the agent wrote, then runs', () => {
  it('claude-code: `bash build-all.sh` (make build-safe inside) is rerouted, and make runs on the VM', () => {
    // The agent's file tool wrote the script in an earlier step; the Bash tool call only names it.
    writeFileSync(join(h.koda, 'build-all.sh'), '#!/bin/bash\nset -e\nmake build-safe\n');
    const r = runHook('claude-code', event('claude-code', 'bash build-all.sh', h.koda), hookEnv(h));
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe('ask');
    expect(out.permissionDecisionReason).toContain('koda-make');
    const log = join(h.home, 'script.log');
    const before = makeRuns().length;
    const run = agentRuns(out.updatedInput.command, h.koda, log);
    expect(run.status, run.stderr).toBe(0);
    expectRanOnVm(log, before);
  });

  it('claude-code: a script the line writes and then runs is judged as what the line writes (static text)', () => {
    const r = runHook('claude-code', event('claude-code', "printf 'make build-safe\\n' > b2.sh && bash b2.sh", h.koda), hookEnv(h));
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe('ask');
    expect(out.permissionDecisionReason).toContain('rule koda-make');
  });

  it('claude-code: a script the line writes from text offhost cannot know, then runs, is refused', () => {
    const r = runHook('claude-code', event('claude-code', 'printf "$CMD\\n" > b3.sh && bash b3.sh', h.koda), hookEnv(h));
    const out = JSON.parse(r.stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe('deny');
    expect(out.permissionDecisionReason).toContain('unknown-program');
  });
});

/** POSIX shell word splitting as Python's shlex.split (what Codex's argv-style tools do), quotes removed. */
function shlexSplit(s: string): string[] {
  const out: string[] = [];
  let w = '';
  let has = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "'") {
      const j = s.indexOf("'", i + 1);
      w += s.slice(i + 1, j);
      i = j;
      has = true;
    } else if (c === '"') {
      for (i++; s[i] !== '"'; i++) w += s[i] === '\\' ? s[++i] : s[i];
      has = true;
    } else if (c === '\\') {
      w += s[++i];
      has = true;
    } else if (c === ' ') {
      if (has) out.push(w);
      w = '';
      has = false;
    } else {
      w += c;
      has = true;
    }
  }
  if (has) out.push(w);
  return out;
}

describe('edges of the agent doors', () => {
  it('codex --mode rewrite: the rewritten command survives an argv split and exec (no shell), and runs make on the VM', () => {
    const r = runHook('codex', event('codex', 'make build-safe', h.koda), hookEnv(h), ['--mode', 'rewrite']);
    const command = JSON.parse(r.stdout).hookSpecificOutput.updatedInput.command as string;
    expect(command.startsWith('env OFFHOST_SESSION=codex-sess-1 OFFHOST_AI=codex ')).toBe(true);
    const argv = shlexSplit(command);
    expect(argv[0]).toBe('env');
    const log = join(h.home, 'codex-argv.log');
    const env = standinEnv({ log, home: h.home, extraPath: [offhostDir, h.localBin], env: { OFFHOST_ROLE: 'laptop', LAPTOP_MARKER: '1', OFFHOST_AUDIT_LOG: h.audit } });
    const before = makeRuns().length;
    const run = spawnSync(argv[0] as string, argv.slice(1), { cwd: h.koda, env, encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    expectRanOnVm(log, before);
    const gitLog = spawnSync('git', ['log', '--format=%s', 'refs/offhost/locks'], { cwd: join(h.home, 'dev', 'koder'), encoding: 'utf8' }).stdout;
    expect(gitLog).toMatch(/s\.khost1\.dev-linux-koda.*codex-sess-1/);
  });

  it('a bare CI=1 or CI=true in the agent environment does not turn the laptop guard off', () => {
    for (const CI of ['1', 'true']) {
      const env = hookEnv(h, { CI });
      delete (env as Record<string, string>).OFFHOST_ROLE;
      const r = runHook('claude-code', event('claude-code', 'make build-safe', h.koda), env);
      expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecision).toBe('ask');
      const g = runHook('gemini', event('gemini', 'make build-safe', h.koda), env);
      expect(JSON.parse(g.stdout).hookSpecificOutput.tool_input.command).toContain(' run -- ');
    }
    // offhost's own setting still decides.
    const vm = runHook('claude-code', event('claude-code', 'make build-safe', h.koda), hookEnv(h, { OFFHOST_ROLE: 'ci', CI: '1' }));
    expect(vm.stdout).toBe('');
  });

  it('deadlines raised past the agent timeout are capped below it (and said so)', () => {
    const r = runHook('claude-code', event('claude-code', 'ls', h.koda), hookEnv(h, { OFFHOST_HOOK_STDIN_MS: '600000', OFFHOST_HOOK_BUDGET_MS: '600000' }));
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('OFFHOST_HOOK_STDIN_MS (capped at 12000)');
    expect(r.stderr).toContain('OFFHOST_HOOK_BUDGET_MS (capped at 12000)');
  });

  it('claude-code PowerShell: a line naming a trigger is refused, with the command to run instead', () => {
    const ev = JSON.stringify({ session_id: 'sess-1', transcript_path: '/t', cwd: h.koda, hook_event_name: 'PreToolUse', tool_name: 'PowerShell', tool_input: { command: "& 'C:\\msys64\\usr\\bin\\make.exe' build-safe" }, tool_use_id: 'p' });
    const out = JSON.parse(runHook('claude-code', ev, hookEnv(h)).stdout).hookSpecificOutput;
    expect(out.permissionDecision).toBe('deny');
    const command = String(out.permissionDecisionReason).split('\n').at(-1) as string;
    const log = join(h.home, 'ps.log');
    const before = makeRuns().length;
    expect(agentRuns(command, h.koda, log).status).toBe(0);
    expectRanOnVm(log, before);
  });
});
