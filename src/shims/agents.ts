// Putting the shims first on PATH for the agents whose shell tool lets a hook or a setting change it
// (docs/SHIMS.md has the agent-by-agent account).
//  - Claude Code: a SessionStart hook runs with CLAUDE_ENV_FILE set; Claude Code sources that file before
//    each Bash tool command. offhost adds `offhost shim env --claude-env-file` as a SessionStart hook in the
//    project's .claude/settings.json (merged, idempotent: one entry however often it runs).
//  - Codex: `[shell_environment_policy] set = { PATH = "..." }` in config.toml sets the shell tool's PATH,
//    as a literal value (no $PATH expansion): offhost prints the lines with today's PATH behind the shim
//    directory instead of editing a TOML file it cannot parse.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { isRecord, shQuote } from '../adapters/common.js';
import { readSettings } from '../adapters/init-agent.js';

const MARK = 'shim env --claude-env-file';

export function claudeSessionStartCommand(node: string, bin: string): string {
  return [node, bin, 'shim', 'env', '--claude-env-file'].map(shQuote).join(' ');
}

/** Adds (or updates) the SessionStart hook; returns the file and whether it changed. */
export function wireClaudeCode(project: string, command: string, dryRun = false): { file: string; changed: boolean; text: string } {
  const file = join(resolve(project), '.claude', 'settings.json');
  const { settings } = readSettings(file);
  const hooks = settings.hooks === undefined ? {} : settings.hooks;
  if (!isRecord(hooks)) throw new ConfigError('"hooks" is not an object; offhost will not overwrite it', file);
  settings.hooks = hooks;
  const list = hooks.SessionStart === undefined ? [] : hooks.SessionStart;
  if (!Array.isArray(list)) throw new ConfigError('"hooks.SessionStart" is not an array; offhost will not overwrite it', file);
  hooks.SessionStart = list;
  let found = false;
  let changed = false;
  for (const group of list) {
    if (!isRecord(group) || !Array.isArray(group.hooks)) continue;
    for (const h of group.hooks as unknown[]) {
      if (!isRecord(h) || typeof h.command !== 'string' || !h.command.includes(MARK)) continue;
      found = true;
      if (h.command !== command) {
        h.command = command;
        changed = true;
      }
    }
  }
  if (!found) {
    list.push({ hooks: [{ type: 'command', command, timeout: 30 }] });
    changed = true;
  }
  const text = `${JSON.stringify(settings, null, 2)}\n`;
  if (changed && !dryRun) {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.offhost-${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  }
  return { file, changed, text };
}

/** The config.toml lines for Codex (printed, not written). */
export function codexLines(dir: string, path: string | undefined): string {
  const rest = (path ?? '').split(':').filter((d) => d !== '' && d !== dir);
  const value = [dir, ...rest].join(':').replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return `[shell_environment_policy]\nset = { PATH = "${value}" }\n`;
}
