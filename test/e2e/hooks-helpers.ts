// Shared by the hook end-to-end tests: the built CLI run as an agent runs it (a fresh process per event,
// the event JSON on stdin), and a temporary HOME holding the Koda engine directory the built-in pack knows.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';

export const ROOT = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', '..');
export const BIN = join(ROOT, 'dist', 'offhost.mjs');

export function requireBuild(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does it)`);
}

export interface FakeHome {
  home: string;
  koda: string;
  audit: string;
  /** A directory for stand-in tools that must not run here (a fake `make`). */
  localBin: string;
  /** Where the fake local `make` logs if it ever runs on the laptop. */
  localLog: string;
}

export function fakeHome(): FakeHome {
  const home = mkdtempSync(join(tmpdir(), 'offhost-hooks-home-'));
  const koda = join(home, 'dev', 'koder', 'engines', 'lang', 'koda');
  mkdirSync(koda, { recursive: true });
  // `offhost run` commits lock files: git needs an identity in this HOME.
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Offhost Test\n\temail = test@offhost.invalid\n[init]\n\tdefaultBranch = main\n');
  writeFileSync(join(koda, 'Makefile'), 'build-safe:\n\t@echo building\n');
  const localBin = join(home, 'local-bin');
  mkdirSync(localBin);
  const localLog = join(home, 'make.log');
  // LAPTOP_MARKER=1 is set on the laptop side only: the stand-ins give the "VM" a fresh environment.
  // A fake heavy tool: logs its argv, cwd and whether it saw the laptop's environment, one JSON line a run.
  writeFileSync(
    join(localBin, 'make'),
    `#!/usr/bin/env node\nrequire('fs').appendFileSync(${JSON.stringify(localLog)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), laptop: process.env.LAPTOP_MARKER === '1' }) + '\\n');\n`,
  );
  chmodSync(join(localBin, 'make'), 0o755);
  return { home, koda, audit: join(home, 'audit.jsonl'), localBin, localLog };
}

export function hookEnv(h: FakeHome, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: h.home,
    OFFHOST_ROLE: 'laptop',
    OFFHOST_AUDIT_LOG: h.audit,
    LANG: 'C.UTF-8',
    ...extra,
  };
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** One hook call, exactly as an agent makes it. */
export function runHook(agent: string, input: string, env: Record<string, string>, args: string[] = []): Run {
  const r = spawnSync(process.execPath, [BIN, 'hook', agent, ...args], { input, env, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A git repository at ~/dev/koder (the monorepo root) for `offhost run` to keep its VM lock files in. */
export function initMonorepo(h: FakeHome): string {
  const root = join(h.home, 'dev', 'koder');
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: root, encoding: 'utf8', env: { ...process.env, HOME: h.home, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return root;
}

/** A directory with an `offhost` executable (the built CLI), for rewrites that call plain `offhost`. */
export function offhostOnPath(h: FakeHome): string {
  const dir = join(h.home, 'offhost-bin');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'offhost'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} "$@"\n`);
  chmodSync(join(dir, 'offhost'), 0o755);
  return dir;
}

/** The hook command `init` wrote for `agent` in `project`, exactly as the agent will launch it. */
export /** The command init wrote, and how the agent runs it (its shell and its environment). */
function hookCommand(project: string, agent: string): string {
  const json = (f: string) => JSON.parse(readFileSync(join(project, f), 'utf8'));
  switch (agent) {
    case 'claude-code':
      return json('.claude/settings.json').hooks.PreToolUse[0].hooks[0].command;
    case 'codex':
      return json('.codex/hooks.json').hooks.PreToolUse[0].hooks[0].command;
    case 'gemini':
      return json('.gemini/settings.json').hooks.BeforeTool[0].hooks[0].command;
    case 'cursor':
      return json('.cursor/hooks.json').hooks.beforeShellExecution[0].command;
    case 'copilot':
      return json('.github/hooks/offhost.json').hooks.preToolUse[0].bash;
    case 'windsurf':
      return json('.windsurf/hooks.json').hooks.pre_run_command[0].command;
  }
  throw new Error(agent);
}

export /** Each agent's documented event for `command` run in `cwd`. */
function event(agent: string, command: string, cwd: string): string {
  switch (agent) {
    case 'claude-code':
      return JSON.stringify({ session_id: 's1', transcript_path: '/t', cwd, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'x' });
    case 'codex':
      return JSON.stringify({ session_id: 's1', turn_id: 't', transcript_path: null, cwd, hook_event_name: 'PreToolUse', model: 'gpt-5', permission_mode: 'default', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'c' });
    case 'gemini':
      return JSON.stringify({ session_id: 's1', transcript_path: '/t', cwd, hook_event_name: 'BeforeTool', timestamp: '2026-01-01T00:00:00Z', tool_name: 'run_shell_command', tool_input: { command } });
    case 'cursor':
      return JSON.stringify({ hook_event_name: 'beforeShellExecution', conversation_id: 'c1', generation_id: 'g1', workspace_roots: [cwd], command, cwd });
    case 'copilot':
      return JSON.stringify({ timestamp: 1704614400000, cwd, toolName: 'bash', toolArgs: JSON.stringify({ command, description: 'x' }) });
    case 'windsurf':
      return JSON.stringify({ agent_action_name: 'pre_run_command', trajectory_id: 'tr1', execution_id: 'e1', timestamp: '2026-01-01T00:00:00Z', tool_info: { command_line: command, cwd } });
  }
  throw new Error(agent);
}
