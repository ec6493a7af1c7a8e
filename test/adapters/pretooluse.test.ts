// Claude Code and Codex PreToolUse handling with a hand-written classify (no guard, no process).
import { describe, expect, it } from 'vitest';
import { handleClaudeCode } from '../../src/adapters/claude-code.js';
import { handleCodex } from '../../src/adapters/codex.js';
import { REWRITE, at, calls } from './fake-classify.js';

const env = {};
function ev(over: Record<string, unknown> = {}, input: Record<string, unknown> = {}) {
  return JSON.stringify({
    session_id: 'abc-123',
    transcript_path: '/tmp/t.jsonl',
    cwd: '/home/koder/dev/koder/engines/lang/koda',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'ls -la', description: 'list', timeout: 120000, ...input },
    tool_use_id: 'toolu_1',
    ...over,
  });
}
const out = (s: string) => JSON.parse(s) as { hookSpecificOutput: Record<string, unknown> };

describe('claude-code', () => {
  it('allow: no output at all, exit 0, and the cwd goes to classification', () => {
    calls.length = 0;
    const r = handleClaudeCode(ev(), at, { env });
    expect(r).toMatchObject({ stdout: '', stderr: '', exitCode: 0 });
    expect(r.audit).toMatchObject({ decision: 'allow', session: 'claude-abc-123', command: 'ls -la' });
    expect(calls).toEqual([{ line: 'ls -la', cwd: '/home/koder/dev/koder/engines/lang/koda' }]);
  });

  it('other tools pass through without a decision or an audit line', () => {
    const r = handleClaudeCode(ev({ tool_name: 'Edit', tool_input: { file_path: '/x', old_string: 'a', new_string: 'b' } }), at, { env });
    expect(r).toEqual({ stdout: '', stderr: '', exitCode: 0, audit: null });
  });

  it('deny: permissionDecision deny with the reason', () => {
    const r = handleClaudeCode(ev({}, { command: 'qemu-system-x86_64 win10.qcow2' }), at, { env });
    expect(r.exitCode).toBe(0);
    expect(out(r.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: 'offhost refused this command (rule qemu-windows): migrate the VM to s.khost1.dev-win10',
      },
    });
  });

  it('reroute, rewrite mode (default): ask, updatedInput keeps every field, session exported', () => {
    const r = handleClaudeCode(ev({}, { command: 'make build-safe' }), at, { env });
    const h = out(r.stdout).hookSpecificOutput;
    expect(h.permissionDecision).toBe('ask');
    expect(h.updatedInput).toEqual({
      command: `env OFFHOST_SESSION=claude-abc-123 OFFHOST_AI=claude ${REWRITE}`,
      description: 'list',
      timeout: 120000,
    });
    expect(String(h.permissionDecisionReason)).toContain('s.khost1.dev-linux-koda');
    expect(r.audit).toMatchObject({ decision: 'reroute', rule: 'koda-make', mode: 'rewrite' });
  });

  it('reroute with --allow-rewrite answers allow', () => {
    const r = handleClaudeCode(ev({}, { command: 'make build-safe' }), at, { env, allowRewrite: true });
    expect(out(r.stdout).hookSpecificOutput.permissionDecision).toBe('allow');
  });

  it('reroute, suggest mode: deny whose reason holds the exact command to run', () => {
    const r = handleClaudeCode(ev({}, { command: 'make build-safe' }), at, { env, mode: 'suggest' });
    const h = out(r.stdout).hookSpecificOutput;
    expect(h.permissionDecision).toBe('deny');
    expect(h.updatedInput).toBeUndefined();
    expect(String(h.permissionDecisionReason)).toContain(`\nenv OFFHOST_SESSION=claude-abc-123 OFFHOST_AI=claude ${REWRITE}`);
  });

  it('OFFHOST_SESSION in the environment wins; odd session ids are quoted safely', () => {
    const r = handleClaudeCode(ev({}, { command: 'make build-safe' }), at, { env: { OFFHOST_SESSION: "me's run" } });
    expect(out(r.stdout).hookSpecificOutput.updatedInput).toMatchObject({ command: `env OFFHOST_SESSION='me'\\''s run' OFFHOST_AI=claude ${REWRITE}` });
    const r2 = handleClaudeCode(ev({ session_id: 'a;b $(x)' }, { command: 'make build-safe' }), at, { env });
    expect(out(r2.stdout).hookSpecificOutput.updatedInput).toMatchObject({ command: `env OFFHOST_SESSION=claude-a_b___x_ OFFHOST_AI=claude ${REWRITE}` });
  });

  it.each([
    ['truncated JSON', ev().slice(0, 40)],
    ['empty input', ''],
    ['not an object', '[1,2]'],
    ['unknown event', ev({ hook_event_name: 'PostToolUse' })],
    ['missing event name', ev({ hook_event_name: undefined })],
    ['tool_input not an object', ev({ tool_input: 'ls' })],
    ['command not a string', ev({}, { command: 42 })],
    ['command missing', ev({ tool_input: { description: 'x' } })],
    ['cwd missing', ev({ cwd: undefined })],
    ['cwd relative', ev({ cwd: 'relative/dir' })],
    ['session_id wrong type', ev({ session_id: 7 })],
  ])('broken input (%s): exit 2 with the reason on stderr', (_name, raw) => {
    const r = handleClaudeCode(raw, at, { env });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^offhost refused this tool call: .+\n$/);
    expect(r.audit).toMatchObject({ decision: 'deny', rule: 'hook-input' });
  });

  it('a NUL byte in the command is denied without classifying', () => {
    calls.length = 0;
    const r = handleClaudeCode(ev({}, { command: 'echo ok\u0000make build-safe' }), at, { env });
    expect(out(r.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    expect(String(out(r.stdout).hookSpecificOutput.permissionDecisionReason)).toContain('NUL');
    expect(calls).toEqual([]);
  });

  it('a classify that throws, or a guard that cannot load, is a deny', () => {
    const r = handleClaudeCode(ev({}, { command: 'explode' }), at, { env });
    expect(out(r.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    expect(r.audit?.rule).toBe('internal-error');
    const r2 = handleClaudeCode(ev(), () => { throw new Error('offhost.yaml:3: bad'); }, { env });
    expect(String(out(r2.stdout).hookSpecificOutput.permissionDecisionReason)).toContain('offhost.yaml:3: bad');
  });

  it('a parse error from the guard is a deny with its position', () => {
    const r = handleClaudeCode(ev({}, { command: 'echo $((' }), at, { env });
    expect(String(out(r.stdout).hookSpecificOutput.permissionDecisionReason)).toContain('(rule parse-error): unexpected end of input at line 1, column 3');
  });
});

describe('codex', () => {
  it('allow: no output', () => {
    expect(handleCodex(ev({ turn_id: 't', model: 'gpt-5', permission_mode: 'default' }, { description: undefined }), at, { env }).stdout).toBe('');
  });

  it('reroute defaults to suggest (a deny carrying the command)', () => {
    const r = handleCodex(ev({}, { command: 'make build-safe' }), at, { env });
    const h = out(r.stdout).hookSpecificOutput;
    expect(h.permissionDecision).toBe('deny');
    expect(String(h.permissionDecisionReason)).toContain(`env OFFHOST_SESSION=codex-abc-123 OFFHOST_AI=codex ${REWRITE}`);
  });

  it('rewrite mode: allow + updatedInput (Codex takes updatedInput only with allow)', () => {
    const r = handleCodex(ev({ tool_input: { command: 'make build-safe' } }), at, { env, mode: 'rewrite' });
    const h = out(r.stdout).hookSpecificOutput;
    expect(h.permissionDecision).toBe('allow');
    expect(h.updatedInput).toEqual({ command: `env OFFHOST_SESSION=codex-abc-123 OFFHOST_AI=codex ${REWRITE}` });
  });

  it('argv-array commands are joined for checking and rewritten as an argv', () => {
    calls.length = 0;
    const r = handleCodex(ev({ tool_name: 'shell', tool_input: { command: ['bash', '-lc', 'cd x && make build-safe'] } }), at, { env, mode: 'rewrite' });
    expect(calls[0]?.line).toBe("bash -lc 'cd x && make build-safe'");
    expect(out(r.stdout).hookSpecificOutput.updatedInput).toEqual({ command: ['bash', '-c', `env OFFHOST_SESSION=codex-abc-123 OFFHOST_AI=codex ${REWRITE}`] });
  });

  it('broken input is a deny JSON on stdout with exit 0 (exit 2 fails open in some Codex releases)', () => {
    const r = handleCodex('{"hook_event_name": "PreToolUse", "tool_na', at, { env });
    expect(r.exitCode).toBe(0);
    expect(out(r.stdout).hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
    expect(r.stderr).toContain('not valid JSON');
  });

  it('apply_patch and other tools pass', () => {
    expect(handleCodex(ev({ tool_name: 'apply_patch', tool_input: { command: 'x' } }), at, { env })).toMatchObject({ stdout: '', exitCode: 0, audit: null });
  });
});

describe('project config (hook: section) under the command line and environment', () => {
  const settingsAt = () => ({ mode: 'suggest' as const, allowRewrite: true });
  it('config mode applies when neither --mode nor OFFHOST_HOOK_MODE is given', () => {
    const r = handleClaudeCode(ev({}, { command: 'make build-safe' }), at, { env, settingsAt });
    expect(out(r.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(r.audit?.mode).toBe('suggest');
  });
  it('--mode wins over the config; config allow_rewrite turns ask into allow', () => {
    const r = handleClaudeCode(ev({}, { command: 'make build-safe' }), at, { env, settingsAt, mode: 'rewrite' });
    expect(out(r.stdout).hookSpecificOutput.permissionDecision).toBe('allow');
  });
  it('a config that cannot be read does not change the answer shape', () => {
    const r = handleClaudeCode(ev({}, { command: 'make build-safe' }), at, { env, settingsAt: () => { throw new Error('bad'); } });
    expect(out(r.stdout).hookSpecificOutput.permissionDecision).toBe('ask');
  });
});
