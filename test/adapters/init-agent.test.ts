import { describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initAgent } from '../../src/adapters/init-agent.js';
import type { Io } from '../../src/cli/io.js';
import { systemClock } from '../../src/types.js';

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const value: Io = { argv: [], env: {}, cwd, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => '', clock: systemClock };
  return { io: value, out, err };
}
const opts = { node: '/usr/bin/node', bin: '/opt/offhost/dist/offhost.mjs' };
const project = () => mkdtempSync(join(tmpdir(), 'offhost-init-'));
const read = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

describe('initAgent', () => {
  it('claude-code: writes .claude/settings.json with an absolute, npx-free command', async () => {
    const d = project();
    expect(await initAgent('claude-code', io(d).io, opts)).toBe(0);
    expect(read(join(d, '.claude/settings.json'))).toEqual({
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/bin/node /opt/offhost/dist/offhost.mjs hook claude-code', timeout: 30 }] }] },
    });
  });

  it('is idempotent and keeps other hooks and settings', async () => {
    const d = project();
    mkdirSync(join(d, '.claude'));
    const before = {
      permissions: { allow: ['Bash(git status)'] },
      hooks: {
        PreToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'prettier --check' }] }],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'log.sh' }] }],
      },
    };
    writeFileSync(join(d, '.claude/settings.json'), JSON.stringify(before));
    await initAgent('claude-code', io(d).io, opts);
    const second = io(d);
    await initAgent('claude-code', second.io, opts);
    expect(second.out.join('')).toContain('already set up');
    const after = read(join(d, '.claude/settings.json'));
    expect(after.permissions).toEqual(before.permissions);
    expect(after.hooks.PostToolUse).toEqual(before.hooks.PostToolUse);
    expect(after.hooks.PreToolUse).toHaveLength(2);
    expect(after.hooks.PreToolUse[0]).toEqual(before.hooks.PreToolUse[0]);
    // A move of the install (another bin path) updates the one entry instead of adding another.
    await initAgent('claude-code', io(d).io, { ...opts, bin: '/new/place/dist/offhost.mjs' });
    const moved = read(join(d, '.claude/settings.json'));
    const ours = moved.hooks.PreToolUse.flatMap((g: { hooks: { command: string }[] }) => g.hooks).filter((h: { command: string }) => h.command.includes('offhost'));
    expect(ours).toEqual([{ type: 'command', command: '/usr/bin/node /new/place/dist/offhost.mjs hook claude-code', timeout: 30 }]);
  });

  it('refuses a settings file that is not JSON, with file:line:column, and leaves it alone', async () => {
    const d = project();
    mkdirSync(join(d, '.gemini'));
    const broken = '{\n  "theme": "dark",\n  "hooks": {,\n}\n';
    writeFileSync(join(d, '.gemini/settings.json'), broken);
    await expect(initAgent('gemini', io(d).io, opts)).rejects.toThrow(/\.gemini\/settings\.json:3:\d+: not valid JSON/);
    expect(readFileSync(join(d, '.gemini/settings.json'), 'utf8')).toBe(broken);
  });

  it('codex: .codex/hooks.json PreToolUse matcher Bash; gemini: BeforeTool run_shell_command in ms', async () => {
    const d = project();
    await initAgent('codex', io(d).io, opts);
    await initAgent('gemini', io(d).io, opts);
    expect(read(join(d, '.codex/hooks.json')).hooks.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/bin/node /opt/offhost/dist/offhost.mjs hook codex', timeout: 30 }] },
    ]);
    expect(read(join(d, '.gemini/settings.json')).hooks.BeforeTool).toEqual([
      { matcher: 'run_shell_command', hooks: [{ type: 'command', command: '/usr/bin/node /opt/offhost/dist/offhost.mjs hook gemini', timeout: 30000, name: 'offhost' }] },
    ]);
  });

  it('quotes paths with spaces; rejects unknown agents', async () => {
    const d = project();
    await initAgent('claude-code', io(d).io, { node: '/usr/bin/node', bin: '/My Tools/offhost.mjs' });
    expect(read(join(d, '.claude/settings.json')).hooks.PreToolUse[0].hooks[0].command).toBe("/usr/bin/node '/My Tools/offhost.mjs' hook claude-code");
    await expect(initAgent('cursor', io(d).io, opts)).rejects.toThrow(/unknown agent/);
  });
});

describe('mergeHook edge cases', () => {
  it('moves our entry out of a shared group with another matcher, leaving the others in place', async () => {
    const { mergeHook } = await import('../../src/adapters/init-agent.js');
    const settings = {
      hooks: {
        PreToolUse: [
          { matcher: 'Bash|Edit', hooks: [{ type: 'command', command: 'audit.sh' }, { type: 'command', command: 'node /old/offhost.mjs hook claude-code' }] },
          { matcher: 'Bash', hooks: [{ type: 'command', command: "offhost hook 'claude-code' --mode suggest" }] },
        ],
      },
    };
    const { settings: out, changed } = mergeHook(settings, 'claude-code', 'node /new/offhost.mjs hook claude-code', 'x.json');
    expect(changed).toBe(true);
    expect(out.hooks).toEqual({
      PreToolUse: [
        { matcher: 'Bash|Edit', hooks: [{ type: 'command', command: 'audit.sh' }] },
        { matcher: 'Bash', hooks: [{ type: 'command', command: 'node /new/offhost.mjs hook claude-code', timeout: 30 }] },
      ],
    });
    expect(settings.hooks.PreToolUse[0]?.hooks).toHaveLength(2); // the input is not mutated
  });

  it('refuses hooks / hooks.<event> of the wrong shape instead of overwriting them', async () => {
    const { mergeHook } = await import('../../src/adapters/init-agent.js');
    expect(() => mergeHook({ hooks: [] }, 'codex', 'c', 'f.json')).toThrow(/"hooks" is not an object/);
    expect(() => mergeHook({ hooks: { BeforeTool: {} } }, 'gemini', 'c', 'f.json')).toThrow(/"hooks.BeforeTool" is not an array/);
  });

  it('--dry-run prints the merged file and writes nothing', async () => {
    const d = project();
    const t = io(d);
    await initAgent('gemini', t.io, { ...opts, dryRun: true });
    expect(t.out.join('')).toContain('"BeforeTool"');
    expect(() => readFileSync(join(d, '.gemini/settings.json'))).toThrow();
  });
});
