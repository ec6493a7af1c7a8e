// How doctor launches a hook command as each agent would (src/doctor/agent-launch.ts): what it reads from a
// hook that ends before reading the event, and from one that hangs or cannot start.
import { describe, expect, it } from 'vitest';
import { agentReading, describeRun, launchAsAgent, syntheticEvent } from '../../src/doctor/agent-launch.js';
import { tmpdir } from 'node:os';

const cwd = tmpdir();
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd };
// An event far bigger than a pipe's buffer: the hook's early exit always cuts the write (EPIPE).
const big = JSON.stringify({ ...JSON.parse(syntheticEvent('claude-code', 'ls', cwd)), pad: 'x'.repeat(1 << 20) });

describe('a hook that ends without reading its event', () => {
  it('is read by its exit status, as the agent reads it (not as a failure to run)', () => {
    const refused = launchAsAgent('claude-code', "echo 'offhost-shell: cannot start offhost' >&2; exit 2", cwd, big, env);
    expect(refused.error).toBeUndefined();
    expect(refused.status).toBe(2);
    expect(agentReading('claude-code', refused)).toBe('blocked');
    expect(describeRun(refused)).toBe('status 2: offhost-shell: cannot start offhost');
    const passed = launchAsAgent('claude-code', 'exit 0', cwd, big, env);
    expect(passed.error).toBeUndefined();
    expect(agentReading('claude-code', passed)).toBe('allowed');
  });

  it('a command that cannot start at all is still a failure of its own', () => {
    const r = launchAsAgent('codex', 'exit 0', cwd, big, { ...env, SHELL: '/nonexistent/shell' });
    expect(r.error).toMatch(/ENOENT/);
    expect(agentReading('codex', r)).toBe('allowed');
  });
});
