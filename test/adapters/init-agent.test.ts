import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { WAIT_MS } from '../helpers/hang-guard.js';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guardIsCurrent, hookArgsOf, hookCommand, initAgent, mergeHook, stripJsonComments } from '../../src/adapters/init-agent.js';
import type { Io } from '../../src/io.js';
import { systemClock } from '../../src/types.js';

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

function io(cwd: string, home = cwd) {
  const out: string[] = [];
  const err: string[] = [];
  const value: Io = { argv: [], env: { HOME: home }, cwd, stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => '', clock: systemClock };
  return { io: value, out, err };
}
/** A project with offhost installed in it (node_modules/.bin/offhost), the way npm lays it out. */
function project(installed = true, git = true): string {
  const d = mkdtempSync(join(tmpdir(), 'offhost-init-'));
  made.push(d);
  if (git) mkdirSync(join(d, '.git'));
  if (installed) {
    mkdirSync(join(d, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(d, 'node_modules', '.bin', 'offhost'), '#!/bin/sh\n');
  }
  return d;
}
const abs = { node: '/usr/bin/node', bin: '/opt/offhost/dist/offhost.cjs' };
const read = (p: string) => JSON.parse(readFileSync(p, 'utf8'));
/** What Codex, Cursor and Windsurf get: the script inside `/bin/sh -c '…'`, the same words to sh, zsh and fish. */
const POSIX = (script: string) => `/bin/sh -c '${script.replace(/'/g, `'\\''`)}'`;
const CANNOT = (agent: string) => `offhost hook ${agent} could not run (status $s), so the tool call is refused; fix: npm ci (reinstall offhost) in the project, or offhost init --agent ${agent} again`;
/** `launch` under the watchdog (27 s), then the block for any status but 0 (and 2): the spec of the written script. */
const GUARDED = (agent: string, launch: string, tail = `[ $s -eq 2 ] || echo "${CANNOT(agent)}" >&2; exit 2`) =>
  `exec 3<&0; ${launch} <&3 3<&- & p=$!; ( f=; trap '[ -n "$f" ] || { kill $k 2>/dev/null; exit 0; }' TERM; sleep 27 4>&- & k=$!; wait $k && { f=1; kill -9 $p; echo "offhost hook ${agent} gave no answer within 27 s and was stopped, so the tool call is refused; see why with: offhost doctor (a NODE_OPTIONS preload, a config file that cannot be read)" >&4; } ) 4>&2 </dev/null >/dev/null 2>&1 3<&- & w=$!; wait $p; s=$?; kill $w 2>/dev/null; [ $s -eq 0 ] && exit 0; ${tail}`;

describe('initAgent: committed settings hold no machine path', () => {
  it('claude-code: "$CLAUDE_PROJECT_DIR"/node_modules/.bin/offhost, with a fallback that blocks (exit 2)', async () => {
    const d = project();
    expect(await initAgent('claude-code', io(d).io, abs)).toBe(0);
    const text = readFileSync(join(d, '.claude/settings.json'), 'utf8');
    expect(text).not.toContain(d);
    expect(text).not.toContain('/usr/bin/node');
    expect(JSON.parse(text)).toEqual({
      hooks: {
        PreToolUse: [
          { matcher: 'Bash|Monitor|PowerShell|mcp__.*', hooks: [{ type: 'command', command: GUARDED('claude-code', '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/offhost hook claude-code'), timeout: 30, onFailure: 'block' }] },
        ],
      },
    });
  });

  it('codex, cursor and gemini (in a git work tree): relative to its root; timeout in ms for gemini', async () => {
    const root = project(false);
    const d = join(root, 'packages', 'app');
    mkdirSync(join(d, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(d, 'node_modules', '.bin', 'offhost'), '');
    await initAgent('codex', io(d).io, abs);
    await initAgent('gemini', io(d).io, abs);
    await initAgent('cursor', io(d).io, abs);
    expect(read(join(d, '.codex/hooks.json')).hooks.PreToolUse).toEqual(
      ['Bash', 'mcp__.*'].map((matcher) => ({
        matcher,
        hooks: [{ type: 'command', command: POSIX(GUARDED('codex', '"$(git rev-parse --show-toplevel)"/packages/app/node_modules/.bin/offhost hook codex')), timeout: 30 }],
      })),
    );
    expect(read(join(d, '.gemini/settings.json')).hooks.BeforeTool).toEqual([
      { matcher: 'run_shell_command|mcp__.*', hooks: [{ type: 'command', command: GUARDED('gemini', '"$(git rev-parse --show-toplevel)"/packages/app/node_modules/.bin/offhost hook gemini'), timeout: 30000, name: 'offhost' }] },
    ]);
    const cursor = read(join(d, '.cursor/hooks.json'));
    expect(cursor.version).toBe(1);
    expect(Object.keys(cursor.hooks)).toEqual(['beforeShellExecution', 'beforeMCPExecution']);
    expect(cursor.hooks.beforeShellExecution[0]).toMatchObject({ timeout: 30, failClosed: true });
    expect(cursor.hooks.beforeShellExecution[0].command).toBe(
      POSIX(GUARDED('cursor', '"$(git rev-parse --show-toplevel)"/packages/app/node_modules/.bin/offhost hook cursor', `[ $s -eq 2 ] && exit 2; printf '{"permission":"deny","user_message":"%s","agent_message":"%s"}\\n' "${CANNOT('cursor')}" "${CANNOT('cursor')}"; echo "${CANNOT('cursor')}" >&2; exit 2`)),
    );
  });

  it('gemini outside git: "${GEMINI_PROJECT_DIR}" (braced: Gemini replaces the bare spelling in the text)', async () => {
    const d = project(true, false);
    await initAgent('gemini', io(d).io, abs);
    expect(read(join(d, '.gemini/settings.json')).hooks.BeforeTool[0].hooks[0].command).toBe(GUARDED('gemini', '"${GEMINI_PROJECT_DIR}"/node_modules/.bin/offhost hook gemini'));
  });

  it('copilot: .github/hooks/offhost.json, version 1, bash + cwd + timeoutSec, a fallback that prints a deny', async () => {
    const d = project();
    await initAgent('copilot', io(d).io, abs);
    const f = read(join(d, '.github/hooks/offhost.json'));
    expect(f.version).toBe(1);
    expect(f.hooks.preToolUse).toHaveLength(1);
    expect(f.hooks.preToolUse[0]).toMatchObject({ type: 'command', cwd: '.', timeoutSec: 30 });
    expect(f.hooks.preToolUse[0].bash).toBe(
      GUARDED('copilot', '"$(git rev-parse --show-toplevel)"/node_modules/.bin/offhost hook copilot', `printf '{"permissionDecision":"deny","permissionDecisionReason":"%s"}\\n' "${CANNOT('copilot')}"; echo "${CANNOT('copilot')}" >&2; exit 0`),
    );
  });

  it('windsurf: pre_run_command and pre_mcp_tool_use with show_output', async () => {
    const d = project();
    await initAgent('windsurf', io(d).io, abs);
    const f = read(join(d, '.windsurf/hooks.json'));
    expect(f.hooks.pre_run_command).toEqual([{ command: expect.stringContaining('offhost hook windsurf <&3'), show_output: true }]);
    expect(f.hooks.pre_mcp_tool_use).toHaveLength(1);
  });

  it('not installed in the project: the personal file gets absolute paths, the committed one is not written', async () => {
    const d = project(false);
    const home = project(false, false);
    const t = io(d, home);
    await initAgent('claude-code', t.io, abs);
    expect(existsSync(join(d, '.claude/settings.json'))).toBe(false);
    expect(read(join(d, '.claude/settings.local.json')).hooks.PreToolUse[0].hooks[0].command).toBe(GUARDED('claude-code', '/usr/bin/node /opt/offhost/dist/offhost.cjs hook claude-code'));
    expect(t.out.join('')).toContain('not installed in this project');
    await initAgent('codex', io(d, home).io, abs);
    expect(existsSync(join(home, '.codex/hooks.json'))).toBe(true);
    await expect(initAgent('copilot', io(d, home).io, abs)).rejects.toThrow(/npm install --save-dev offhost/);
  });
});

describe('initAgent keeps the user\'s choices', () => {
  it('re-running keeps --mode rewrite (and any arguments) found in the entry; --hook-args replaces them', async () => {
    const d = project();
    mkdirSync(join(d, '.codex'));
    writeFileSync(
      join(d, '.codex/hooks.json'),
      JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/bin/node /old/dist/offhost.cjs hook codex --mode rewrite', timeout: 30, statusMessage: 'checking' }] }] } }),
    );
    const t = io(d);
    await initAgent('codex', t.io, abs);
    const after = read(join(d, '.codex/hooks.json')).hooks.PreToolUse;
    expect(after).toHaveLength(2);
    for (const g of after) {
      expect(g.hooks).toHaveLength(1);
      expect(g.hooks[0].command).toBe(POSIX(GUARDED('codex', '"$(git rev-parse --show-toplevel)"/node_modules/.bin/offhost hook codex --mode rewrite')));
      expect(g.hooks[0].statusMessage).toBe('checking');
    }
    expect(t.out.join('')).toContain('trust it again in /hooks');
    const again = io(d);
    await initAgent('codex', again.io, abs);
    expect(again.out.join('')).toContain('already set up');
    await initAgent('codex', io(d).io, { ...abs, hookArgs: ['--mode', 'suggest'] });
    expect(read(join(d, '.codex/hooks.json')).hooks.PreToolUse[0].hooks[0].command).toContain('hook codex --mode suggest <&3');
    // Found again inside the `/bin/sh -c '…'` wrapper on the next run.
    const third = io(d);
    await initAgent('codex', third.io, abs);
    expect(third.out.join('')).toContain('already set up');
    expect(hookArgsOf(read(join(d, '.codex/hooks.json')).hooks.PreToolUse[0].hooks[0].command, 'codex')).toEqual(['--mode', 'suggest']);
  });

  it('claude-code: --allow-rewrite survives, other hooks and settings stay, one entry after many runs', async () => {
    const d = project();
    mkdirSync(join(d, '.claude'));
    const before = {
      permissions: { allow: ['Bash(git status)'] },
      hooks: {
        PreToolUse: [
          { matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'prettier --check' }] },
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }, { type: 'command', command: "node /x/offhost.mjs hook 'claude-code' --allow-rewrite" }] },
        ],
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'log.sh' }] }],
      },
    };
    writeFileSync(join(d, '.claude/settings.json'), JSON.stringify(before));
    for (let i = 0; i < 3; i++) await initAgent('claude-code', io(d).io, abs);
    const after = read(join(d, '.claude/settings.json'));
    expect(after.permissions).toEqual(before.permissions);
    expect(after.hooks.PostToolUse).toEqual(before.hooks.PostToolUse);
    expect(after.hooks.PreToolUse).toEqual([
      before.hooks.PreToolUse[0],
      { matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }] },
      { matcher: 'Bash|Monitor|PowerShell|mcp__.*', hooks: [{ type: 'command', command: GUARDED('claude-code', '"$CLAUDE_PROJECT_DIR"/node_modules/.bin/offhost hook claude-code --allow-rewrite'), timeout: 30, onFailure: 'block' }] },
    ]);
  });

  it('hookArgsOf reads the arguments up to the fallback, quotes removed', () => {
    expect(hookArgsOf(GUARDED('claude-code', `"$CLAUDE_PROJECT_DIR"/node_modules/.bin/offhost hook claude-code --mode 'suggest' --role laptop`), 'claude-code')).toEqual(['--mode', 'suggest', '--role', 'laptop']);
    // The form before the watchdog (what older inits wrote) still gives its arguments back.
    expect(hookArgsOf(`"$CLAUDE_PROJECT_DIR"/node_modules/.bin/offhost hook claude-code --allow-rewrite || { s=$?; exit 2; }`, 'claude-code')).toEqual(['--allow-rewrite']);
    expect(hookArgsOf('/usr/bin/node /o/offhost.cjs hook gemini', 'gemini')).toEqual([]);
  });
});

describe('settings files', () => {
  it('gemini: a settings file with // and /* */ comments is read (Gemini strips them); the original is kept beside it', async () => {
    const d = project();
    mkdirSync(join(d, '.gemini'));
    const withComments = '{\n  // my theme\n  "theme": "dark", /* the url below is not a comment */\n  "url": "https://example.com//x"\n}\n';
    writeFileSync(join(d, '.gemini/settings.json'), withComments);
    const t = io(d);
    expect(await initAgent('gemini', t.io, abs)).toBe(0);
    const after = read(join(d, '.gemini/settings.json'));
    expect(after.theme).toBe('dark');
    expect(after.url).toBe('https://example.com//x');
    expect(after.hooks.BeforeTool).toHaveLength(1);
    expect(readFileSync(join(d, '.gemini/settings.json.offhost-backup'), 'utf8')).toBe(withComments);
    expect(stripJsonComments('{"a":"//"} // x')).toBe('{"a":"//"}     ');
  });

  it('refuses a settings file that is not JSON, with file:line:column, and leaves it alone', async () => {
    const d = project();
    mkdirSync(join(d, '.gemini'));
    const broken = '{\n  "theme": "dark",\n  "hooks": {,\n}\n';
    writeFileSync(join(d, '.gemini/settings.json'), broken);
    await expect(initAgent('gemini', io(d).io, abs)).rejects.toThrow(/\.gemini\/settings\.json:3:\d+: not valid JSON/);
    expect(readFileSync(join(d, '.gemini/settings.json'), 'utf8')).toBe(broken);
    mkdirSync(join(d, '.claude'));
    writeFileSync(join(d, '.claude/settings.json'), '{ // no comments in Claude settings\n}');
    await expect(initAgent('claude-code', io(d).io, abs)).rejects.toThrow(/settings\.json:1:\d+: not valid JSON/);
  });

  it('refuses hooks / hooks.<event> of the wrong shape instead of overwriting them; rejects unknown agents', async () => {
    expect(() => mergeHook({ hooks: [] }, 'codex', () => 'c', 'f.json')).toThrow(/"hooks" is not an object/);
    expect(() => mergeHook({ hooks: { BeforeTool: {} } }, 'gemini', () => 'c', 'f.json')).toThrow(/"hooks.BeforeTool" is not an array/);
    await expect(initAgent('vscode', io(project()).io, abs)).rejects.toThrow(/unknown agent/);
  });

  it('--dry-run prints the merged file and writes nothing', async () => {
    const d = project();
    const t = io(d);
    await initAgent('gemini', t.io, { ...abs, dryRun: true });
    expect(t.out.join('')).toContain('"BeforeTool"');
    expect(existsSync(join(d, '.gemini/settings.json'))).toBe(false);
  });
});

describe('the shipped examples', () => {
  it('hooks/claude-code.settings.json, codex.hooks.json, gemini.settings.json are what init writes', async () => {
    for (const [agent, file, shipped] of [
      ['claude-code', '.claude/settings.json', 'hooks/claude-code.settings.json'],
      ['codex', '.codex/hooks.json', 'hooks/codex.hooks.json'],
      ['gemini', '.gemini/settings.json', 'hooks/gemini.settings.json'],
    ] as const) {
      const d = project();
      await initAgent(agent, io(d).io, abs);
      expect(readFileSync(join(d, file), 'utf8'), shipped).toBe(readFileSync(shipped, 'utf8'));
    }
  });
});

describe('guardIsCurrent: the watchdog this version writes, whatever the launch', () => {
  const agents = ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf'] as const;
  it('holds for every command init writes, project-relative or absolute, with any hook arguments', () => {
    for (const agent of agents) {
      for (const args of [[], ['--mode', 'rewrite']]) {
        const rel = hookCommand(agent, '/p', args, { projectBin: '/p/node_modules/.bin/offhost' }).command;
        const abs = hookCommand(agent, '/p', args, { projectBin: null, node: '/usr/bin/node', bin: '/opt/o f/offhost.cjs' }).command;
        expect(guardIsCurrent(agent, rel), `${agent} ${rel}`).toBe(true);
        expect(guardIsCurrent(agent, abs), `${agent} ${abs}`).toBe(true);
      }
    }
  });

  it('fails for an older watchdog (speaks before it kills; sleep holding fd 4), another agent\'s, a bare call, and the frame alone', () => {
    for (const agent of agents) {
      const cmd = hookCommand(agent, '/p', [], { projectBin: '/p/node_modules/.bin/offhost' }).command;
      const speaksFirst = cmd.replace(/\{ f=1; kill -9 \$p; (echo "[^"]*" >&4); \}/, (_m, echo: string) => `{ f=1; ${echo}; kill -9 $p; }`);
      expect(speaksFirst).not.toBe(cmd);
      expect(guardIsCurrent(agent, speaksFirst), agent).toBe(false);
      expect(guardIsCurrent(agent, cmd.replace(' 4>&- & k=$!', ' & k=$!')), agent).toBe(false);
      expect(guardIsCurrent(agent, 'offhost hook ' + agent), agent).toBe(false);
      const other = agent === 'codex' ? 'claude-code' : 'codex';
      expect(guardIsCurrent(agent, hookCommand(other, '/p', [], { projectBin: '/p/node_modules/.bin/offhost' }).command), `${agent} given ${other}'s`).toBe(false);
    }
    // The frame around an empty launch is not a command.
    const frame = hookCommand('claude-code', '/p', [], { projectBin: '/p/node_modules/.bin/offhost' }).command.replace(/"\$CLAUDE_PROJECT_DIR"\/node_modules\/\.bin\/offhost hook claude-code/, '');
    expect(guardIsCurrent('claude-code', frame)).toBe(false);
  });
});

describe('the watchdog says why it stopped offhost, whenever the script ends it', () => {
  it('a TERM from the script (offhost is gone) between the kill and the reason does not swallow the reason', () => {
    // The race, made certain: the watchdog fires after 1 s, then waits 1 s between its kill and its echo;
    // the script sees offhost gone at once and sends the watchdog its TERM inside that second.
    const dir = mkdtempSync(join(tmpdir(), 'offhost-watchdog-'));
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', '.bin', 'offhost'), '#!/bin/sh\nexec sleep 60\n', { mode: 0o755 });
    const cmd = hookCommand('claude-code', dir, [], { projectBin: join(dir, 'node_modules', '.bin', 'offhost') }).command;
    const raced = cmd.replace('sleep 27 4>&-', 'sleep 1 4>&-').replace('kill -9 $p;', 'kill -9 $p; sleep 1;');
    expect(raced).not.toBe(cmd);
    expect(raced).toContain('sleep 1 4>&-');
    const r = spawnSync('/bin/sh', ['-c', raced], { env: { ...process.env, CLAUDE_PROJECT_DIR: dir }, input: '{}', encoding: 'utf8', timeout: WAIT_MS });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('offhost hook claude-code gave no answer within 27 s and was stopped');
    rmSync(dir, { recursive: true, force: true });
  });
});
