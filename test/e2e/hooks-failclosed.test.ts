// Fail closed at the edges: huge commands, a classification over its time budget, stalled input, an audit
// log that cannot be written, and `offhost init --agent` producing a hook command that really runs.
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { type FakeHome, BIN, ROOT, fakeHome, hookEnv, requireBuild, runHook } from './hooks-helpers.js';

let h: FakeHome;
beforeAll(() => {
  requireBuild();
  h = fakeHome();
});

const bashEvent = (command: string, cwd = h.koda) =>
  JSON.stringify({ session_id: 's', transcript_path: '/t', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'x' });
const decision = (stdout: string) => (stdout ? JSON.parse(stdout).hookSpecificOutput : null);

describe('time and size budget', () => {
  it('a command over 1 MiB is refused at once, without parsing', () => {
    const r = runHook('claude-code', bashEvent(`echo ${'a'.repeat(1_100_000)}`), hookEnv(h));
    expect(r.status).toBe(0);
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: 'deny' });
    expect(decision(r.stdout).permissionDecisionReason).toMatch(/\(rule hook-budget\).*more than offhost checks/);
  });

  it('a large command (200 KB) is checked in a child process: an allowed one passes, a heavy one is still caught', () => {
    const big = `echo ${'word '.repeat(40_000)}`;
    expect(runHook('claude-code', bashEvent(big), hookEnv(h))).toMatchObject({ status: 0, stdout: '' });
    const heavy = runHook('claude-code', bashEvent(`${big}; make build-safe`), hookEnv(h), ['--mode', 'suggest']);
    expect(decision(heavy.stdout).permissionDecisionReason).toContain('(rule koda-make)');
  });

  it('a check that does not finish inside the budget is a deny with that reason, not a hang', () => {
    const big = `echo ${'word '.repeat(40_000)}`;
    const r = runHook('claude-code', bashEvent(big), hookEnv(h, { OFFHOST_HOOK_BUDGET_MS: '1' }));
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: 'deny' });
    expect(decision(r.stdout).permissionDecisionReason).toMatch(/\(rule hook-budget\).*longer than offhost's 1ms budget/);
  });

  it('input that never ends is refused after the stdin deadline (exit 2 for Claude Code)', async () => {
    const child = spawn(process.execPath, [BIN, 'hook', 'claude-code'], { env: hookEnv(h, { OFFHOST_HOOK_STDIN_MS: '300' }) });
    child.stdin.write(bashEvent('ls').slice(0, 50)); // and never end()
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const status = await new Promise<number | null>((res) => child.on('exit', res));
    expect(status).toBe(2);
    expect(stderr).toContain('did not end within 300ms');
  });
});

describe('audit log failures', () => {
  it('never block an allowed command nor let a denied one through; they are noted on stderr', () => {
    const bad = join(h.home, 'not-a-dir');
    writeFileSync(bad, '');
    const env = hookEnv(h, { OFFHOST_AUDIT_LOG: join(bad, 'audit.jsonl'), OFFHOST_AUDIT: 'all' });
    const ok = runHook('claude-code', bashEvent('ls'), env);
    expect(ok).toMatchObject({ status: 0, stdout: '' });
    expect(ok.stderr).toContain('could not write the audit log');
    const deny = runHook('claude-code', bashEvent('qemu-system-x86_64 -hda win10.qcow2'), env);
    expect(decision(deny.stdout)).toMatchObject({ permissionDecision: 'deny' });
  });
});

describe('offhost init --agent', () => {
  /** A project with offhost installed the npm way (node_modules/.bin/offhost -> this checkout's dist). */
  const installed = () => {
    const project = mkdtempSync(join(tmpdir(), 'offhost-init-e2e-'));
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(ROOT, join(project, 'node_modules', 'offhost'));
    symlinkSync('../offhost/dist/offhost.cjs', join(project, 'node_modules', '.bin', 'offhost'));
    return project;
  };

  it('writes a hook command that, run the way the agent runs it (sh -c, JSON on stdin), answers', () => {
    const project = installed();
    mkdirSync(join(project, '.claude'));
    writeFileSync(join(project, '.claude', 'settings.json'), JSON.stringify({ model: 'opus', hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } }));
    for (let i = 0; i < 2; i++) {
      const r = spawnSync(process.execPath, [BIN, 'init', '--agent', 'claude-code'], { cwd: project, env: hookEnv(h), encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    }
    const settings = JSON.parse(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'));
    expect(settings.model).toBe('opus');
    expect(settings.hooks.Stop).toHaveLength(1);
    expect(settings.hooks.PreToolUse).toHaveLength(1);
    const command = settings.hooks.PreToolUse[0].hooks[0].command as string;
    expect(command.startsWith('exec 3<&0; "$CLAUDE_PROJECT_DIR"/node_modules/.bin/offhost hook claude-code <&3 ')).toBe(true);
    expect(command).not.toContain('npx');
    const r = spawnSync('sh', ['-c', command], { input: bashEvent('make build-safe'), env: { ...hookEnv(h), CLAUDE_PROJECT_DIR: project }, encoding: 'utf8' });
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: 'ask' });
  });

  it('offhost not installed in the project: the personal settings.local.json gets the absolute command', () => {
    const project = mkdtempSync(join(tmpdir(), 'offhost-init-e2e-'));
    const r0 = spawnSync(process.execPath, [BIN, 'init', '--agent', 'claude-code'], { cwd: project, env: hookEnv(h), encoding: 'utf8' });
    expect(r0.status, r0.stderr).toBe(0);
    const command = JSON.parse(readFileSync(join(project, '.claude', 'settings.local.json'), 'utf8')).hooks.PreToolUse[0].hooks[0].command as string;
    // Run through dist/offhost.mjs, init writes the CommonJS executable beside it (it starts faster).
    expect(command.startsWith(`exec 3<&0; ${process.execPath} ${BIN.replace(/offhost\.mjs$/, 'offhost.cjs')} hook claude-code <&3 `)).toBe(true);
    const r = spawnSync('sh', ['-c', command], { input: bashEvent('make build-safe'), env: hookEnv(h), encoding: 'utf8' });
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: 'ask' });
  });

  it('refuses a settings file that is not JSON, with file:line:column, exit 2', () => {
    const project = installed();
    mkdirSync(join(project, '.claude'));
    writeFileSync(join(project, '.claude', 'settings.json'), '{\n  "hooks": {\n    "PreToolUse": [,]\n  }\n}\n');
    const r = spawnSync(process.execPath, [BIN, 'init', '--agent', 'claude-code'], { cwd: project, env: hookEnv(h), encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/settings\.json:3:\d+: not valid JSON/);
  });
});

describe('project config: hook and audit sections', () => {
  it('offhost.config.yaml hook.mode and audit.path apply; OFFHOST_HOOK_MODE still wins', () => {
    const h2 = fakeHome();
    writeFileSync(join(h2.home, 'dev', 'koder', 'offhost.config.yaml'), 'hook:\n  mode: suggest\naudit:\n  path: ~/project-audit.jsonl\n');
    const env = hookEnv(h2);
    delete (env as Record<string, string>).OFFHOST_AUDIT_LOG;
    const r = runHook('claude-code', bashEvent('make build-safe', h2.koda), env);
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: 'deny' });
    expect(decision(r.stdout).permissionDecisionReason).toContain('Run exactly this instead');
    const logged = readFileSync(join(h2.home, 'project-audit.jsonl'), 'utf8');
    expect(JSON.parse(logged.trim())).toMatchObject({ decision: 'reroute', mode: 'suggest' });
    const r2 = runHook('claude-code', bashEvent('make build-safe', h2.koda), { ...env, OFFHOST_HOOK_MODE: 'rewrite' });
    expect(decision(r2.stdout)).toMatchObject({ permissionDecision: 'ask' });
  });

  it('a broken project config refuses the command with file:line', () => {
    const h2 = fakeHome();
    writeFileSync(join(h2.home, 'dev', 'koder', 'offhost.config.yaml'), 'hook:\n  mode: sometimes\n');
    const r = runHook('claude-code', bashEvent('ls', h2.koda), hookEnv(h2));
    expect(decision(r.stdout)).toMatchObject({ permissionDecision: 'deny' });
    expect(decision(r.stdout).permissionDecisionReason).toMatch(/offhost\.config\.yaml:2/);
  });
});

