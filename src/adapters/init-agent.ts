// `offhost init --agent claude-code|codex|gemini`: writes (or merges) offhost's hook into the project's
// agent settings, calling offhost by absolute path (node + dist/offhost.cjs), never through npx: a hook runs
// before every shell command, and `npx -y` costs seconds per call.
//
// - Claude Code: `.claude/settings.json`, `hooks.PreToolUse[] = {matcher: "Bash", hooks: [{type:
//   "command", command, timeout}]}` (timeout in seconds). Hooks reference: settings files
//   `~/.claude/settings.json`, `.claude/settings.json`, `.claude/settings.local.json`.
// - Codex: `.codex/hooks.json`, the same `hooks.PreToolUse[] = {matcher: "Bash", hooks: [...]}` shape
//   (timeout in seconds). Codex loads `<project>/.codex/hooks.json` and `~/.codex/hooks.json` (both run);
//   hooks are on by default since 0.124 (`[features] hooks = false` turns them off; older builds needed
//   `codex_hooks = true`), and a new hook must be trusted once in Codex's `/hooks` review.
// - Gemini CLI: `.gemini/settings.json`, `hooks.BeforeTool[] = {matcher: "run_shell_command", hooks:
//   [{name: "offhost", type: "command", command, timeout}]}` (timeout in milliseconds, default 60000).
//
// Idempotent: an entry whose command runs `offhost ... hook <agent>` is updated in place (one entry after any
// number of runs); every other hook and setting is kept as it was. A settings file that is not valid JSON
// is refused with file:line:column and left untouched.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ConfigError, UsageError, positionAt } from '../errors.js';
import type { Io } from '../cli/io.js';
import { type AgentName, AGENTS, isRecord, shQuote } from './common.js';
import { ownExecutableForSettings } from '../cli/own-executable.js';

export interface InitAgentOptions {
  /** Project root whose settings are written (default: io.cwd). */
  project?: string;
  /** Absolute path of the offhost entry script (default: the running dist/offhost.cjs). */
  bin?: string;
  /** Node executable (default: process.execPath). */
  node?: string;
  /** Extra arguments for the hook (e.g. ['--mode', 'suggest']). */
  hookArgs?: string[];
  /** Print what would be written, write nothing. */
  dryRun?: boolean;
}

interface AgentTarget {
  file: string;
  event: string;
  matcher: string;
  timeout: number;
  named: boolean;
  notes: string[];
}

const TARGETS: Record<AgentName, AgentTarget> = {
  'claude-code': {
    file: '.claude/settings.json',
    event: 'PreToolUse',
    matcher: 'Bash',
    timeout: 30,
    named: false,
    notes: ['Claude Code reads it at start: restart running sessions (or review it in /hooks).'],
  },
  codex: {
    file: '.codex/hooks.json',
    event: 'PreToolUse',
    matcher: 'Bash',
    timeout: 30,
    named: false,
    notes: [
      'Codex asks you to trust a new hook once: open /hooks in Codex and approve it.',
      'Hooks are on by default since Codex 0.124; older builds need `[features] codex_hooks = true` in config.toml.',
      'Reroutes are answered as a deny carrying the command to run (suggest mode); add `--mode rewrite` to the hook command to rewrite instead.',
    ],
  },
  gemini: {
    file: '.gemini/settings.json',
    event: 'BeforeTool',
    matcher: 'run_shell_command',
    timeout: 30_000,
    named: true,
    notes: ['Gemini CLI loads project settings at start: restart running sessions. Check it with /hooks.'],
  },
};

export function isAgentName(s: string): s is AgentName {
  return (AGENTS as readonly string[]).includes(s);
}

/** The running offhost entry script, resolved through symlinks (node_modules/.bin/offhost -> dist/offhost.cjs). */
export function defaultBin(): string {
  const bin = ownExecutableForSettings();
  if (bin === null) throw new UsageError('cannot tell where offhost is installed; pass the path of dist/offhost.cjs');
  return bin;
}

export function hookCommand(agent: AgentName, opts: InitAgentOptions = {}): string {
  const node = opts.node ?? process.execPath;
  const bin = opts.bin ?? defaultBin();
  return [node, bin, 'hook', agent, ...(opts.hookArgs ?? [])].map(shQuote).join(' ');
}

/** Is this hook entry one of ours (any install path, any options)? */
function isOurs(command: unknown, agent: AgentName): boolean {
  if (typeof command !== 'string') return false;
  return /offhost/.test(command) && new RegExp(`\\bhook\\s+'?${agent.replace('-', '\\-')}'?(\\s|$)`).test(command);
}

/**
 * Where JSON.parse gave up, when its message has no position (Node 20's "Unexpected token" messages): the
 * shortest prefix whose error is not just "the input ended early", found by bisection.
 */
function syntaxErrorOffset(text: string): number {
  const endsEarly = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n));
      return true;
    } catch (err) {
      return /end of (JSON )?input|Unterminated|Expected .* after|Bad control character/i.test(err instanceof Error ? err.message : '') ;
    }
  };
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (endsEarly(mid + 1)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Parses a settings file; invalid JSON becomes a ConfigError with file:line:column. */
export function readSettings(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, 'utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const m = /position (\d+)/.exec(msg);
    const lc = /line (\d+) column (\d+)/.exec(msg);
    let line: number | undefined;
    let column: number | undefined;
    if (lc) {
      line = Number(lc[1]);
      column = Number(lc[2]);
    } else if (m) {
      const p = positionAt(text, Number(m[1]));
      line = p.line;
      column = p.column;
    } else {
      const p = positionAt(text, syntaxErrorOffset(text));
      line = p.line;
      column = p.column;
    }
    throw new ConfigError(`not valid JSON (${msg.replace(/ in JSON at position \d+.*$/, '')}); fix it by hand, offhost will not overwrite it`, path, line, column);
  }
  if (!isRecord(value)) throw new ConfigError('not a JSON object; offhost will not overwrite it', path, 1, 1);
  return value;
}

/** Returns the settings with our hook entry added or updated, and whether anything changed. */
export function mergeHook(settings: Record<string, unknown>, agent: AgentName, command: string, file: string): { settings: Record<string, unknown>; changed: boolean } {
  const t = TARGETS[agent];
  const out = structuredClone(settings);
  const hooks = out.hooks === undefined ? {} : out.hooks;
  if (!isRecord(hooks)) throw new ConfigError('"hooks" is not an object; offhost will not overwrite it', file);
  out.hooks = hooks;
  const list = hooks[t.event] === undefined ? [] : hooks[t.event];
  if (!Array.isArray(list)) throw new ConfigError(`"hooks.${t.event}" is not an array; offhost will not overwrite it`, file);
  hooks[t.event] = list;
  const entry: Record<string, unknown> = { type: 'command', command, timeout: t.timeout };
  if (t.named) entry.name = 'offhost';

  let found = false;
  let changed = false;
  let moved: Record<string, unknown> | null = null;
  for (const group of list) {
    if (!isRecord(group) || !Array.isArray(group.hooks)) continue;
    const hs = group.hooks as unknown[];
    for (let i = 0; i < hs.length; i++) {
      const h = hs[i];
      if (!isRecord(h) || !isOurs(h.command, agent)) continue;
      if (found) {
        // A duplicate from an older run or a hand edit: drop it, one entry is enough.
        hs.splice(i, 1);
        i--;
        changed = true;
        continue;
      }
      found = true;
      const updated = { ...h, ...entry };
      if (JSON.stringify(updated) !== JSON.stringify(h) || group.matcher !== t.matcher) changed = true;
      hs[i] = updated;
      if (group.matcher !== t.matcher) {
        if (hs.length === 1) group.matcher = t.matcher;
        else {
          // Shared with other hooks under another matcher: take ours out into its own group (added below).
          hs.splice(i, 1);
          i--;
          moved = updated;
        }
      }
    }
  }
  if (moved) list.push({ matcher: t.matcher, hooks: [moved] });
  // Drop groups we emptied.
  for (let i = list.length - 1; i >= 0; i--) {
    const g = list[i];
    if (isRecord(g) && Array.isArray(g.hooks) && g.hooks.length === 0) {
      list.splice(i, 1);
      changed = true;
    }
  }
  if (!found) {
    list.push({ matcher: t.matcher, hooks: [entry] });
    changed = true;
  }
  return { settings: out, changed };
}

function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.offhost-${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** `offhost init --agent NAME`: returns the exit status. */
export async function initAgent(name: string, io: Io, opts: InitAgentOptions = {}): Promise<number> {
  if (!isAgentName(name)) throw new UsageError(`unknown agent '${name}' (expected one of: ${AGENTS.join(', ')})`);
  const t = TARGETS[name];
  const project = resolve(io.cwd, opts.project ?? '.');
  const file = join(project, t.file);
  const command = hookCommand(name, opts);
  const settings = readSettings(file);
  const { settings: merged, changed } = mergeHook(settings, name, command, file);
  const text = `${JSON.stringify(merged, null, 2)}\n`;
  const shown = relative(io.cwd, file) || file;
  if (opts.dryRun) {
    io.stdout(`# ${shown}\n${text}`);
    return 0;
  }
  if (changed) writeAtomic(file, text);
  io.stdout(`${changed ? 'wrote' : 'already set up:'} ${shown}: ${t.event} hook (matcher ${t.matcher}) -> ${command}\n`);
  for (const n of t.notes) io.stdout(`  ${n}\n`);
  return 0;
}
