// Gemini CLI BeforeTool handling with a hand-written classify.
import { describe, expect, it } from 'vitest';
import { handleGemini } from '../../src/adapters/gemini.js';
import { REWRITE, at, calls } from './fake-classify.js';

const env = {};
function ev(over: Record<string, unknown> = {}, input: Record<string, unknown> = {}) {
  return JSON.stringify({
    session_id: 's-9',
    transcript_path: '/tmp/t.json',
    cwd: '/home/koder/dev/koder',
    hook_event_name: 'BeforeTool',
    timestamp: '2026-11-29T20:00:00.000Z',
    tool_name: 'run_shell_command',
    tool_input: { command: 'git status', description: 'status', ...input },
    ...over,
  });
}

describe('gemini', () => {
  it('allow: {} and exit 0', () => {
    expect(handleGemini(ev(), at, { env })).toMatchObject({ stdout: '{}\n', exitCode: 0, audit: { decision: 'allow', session: 'gemini-s-9' } });
  });

  it('other tools: {} and no audit', () => {
    expect(handleGemini(ev({ tool_name: 'read_file', tool_input: { file_path: 'x' } }), at, { env })).toEqual({ stdout: '{}\n', stderr: '', exitCode: 0, audit: null });
  });

  it('dir_path / directory are resolved against cwd for classification', () => {
    calls.length = 0;
    handleGemini(ev({}, { dir_path: 'engines/lang/koda' }), at, { env });
    handleGemini(ev({}, { directory: '/abs' }), at, { env });
    expect(calls.map((c) => c.cwd)).toEqual(['/home/koder/dev/koder/engines/lang/koda', '/abs']);
  });

  it('deny: decision deny with reason', () => {
    const r = handleGemini(ev({}, { command: 'qemu-system-x86_64 -hda w.img' }), at, { env });
    expect(JSON.parse(r.stdout)).toEqual({ decision: 'deny', reason: 'offhost refused this command (rule qemu-windows): migrate the VM to s.khost1.dev-win10' });
  });

  it('reroute (default rewrite): hookSpecificOutput.tool_input with every field kept', () => {
    const r = handleGemini(ev({}, { command: 'make build-safe', dir_path: 'engines/lang/koda' }), at, { env });
    const o = JSON.parse(r.stdout);
    expect(o.hookSpecificOutput).toEqual({
      hookEventName: 'BeforeTool',
      tool_input: { command: `env OFFHOST_SESSION=gemini-s-9 OFFHOST_AI=gemini ${REWRITE}`, description: 'status', dir_path: 'engines/lang/koda' },
    });
    expect(o.decision).toBeUndefined();
    expect(o.systemMessage).toContain('rerouted');
  });

  it('reroute in suggest mode: deny with the command', () => {
    const o = JSON.parse(handleGemini(ev({}, { command: 'make build-safe' }), at, { env, mode: 'suggest' }).stdout);
    expect(o.decision).toBe('deny');
    expect(o.reason).toContain(REWRITE);
  });

  it.each([
    ['truncated', ev().slice(0, 30)],
    ['wrong event', ev({ hook_event_name: 'AfterTool' })],
    ['command wrong type', ev({}, { command: ['ls'] })],
    ['dir_path wrong type', ev({}, { dir_path: 3 })],
  ])('broken input (%s): exit 2, reason on stderr', (_n, raw) => {
    const r = handleGemini(raw, at, { env });
    expect(r).toMatchObject({ stdout: '', exitCode: 2 });
    expect(r.stderr).toMatch(/^offhost refused this tool call: /);
  });

  it('NUL byte: deny', () => {
    expect(JSON.parse(handleGemini(ev({}, { command: 'ls\u0000rm' }), at, { env }).stdout).decision).toBe('deny');
  });
});
