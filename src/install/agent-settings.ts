// The agent settings `offhost init` writes, seen from `offhost uninstall`: which hook entries are offhost's,
// and the plan that takes exactly those out of one settings file (the groups, event lists and "hooks" objects
// that only held them go too; a file left empty is removed).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TARGETS, stripJsonComments } from '../adapters/init-agent.js';
import { isPlainObject, jsonIndent, parseJson } from './husky.js';

/** A file `offhost init --agent` can write. */
export interface AgentFile {
  agent: string;
  /** Relative to the project, or to HOME when `inHome`. */
  rel: string;
  inHome: boolean;
  /** How offhost's entry sits in it (init-agent's shapes): `plugin` is a file of offhost's own. */
  shape: string;
  /** Read as the agent reads it: JSON with comments (Gemini). */
  jsonc: boolean;
  /** The top-level fields init adds to a new file (`"version": 1`): with only those left, the file is offhost's. */
  topLevel: Record<string, unknown>;
}

/**
 * Every file `offhost init --agent` can write: each agent's project file and its personal one (Claude Code's
 * is in the project, the others' under HOME), from init's own table (src/adapters/init-agent.ts TARGETS).
 */
export function agentFiles(): AgentFile[] {
  const out: AgentFile[] = [];
  for (const [agent, t] of Object.entries(TARGETS)) {
    const common = { agent, shape: t.shape, jsonc: t.jsonc === true, topLevel: t.topLevel ?? {} };
    out.push({ ...common, rel: t.file, inHome: false });
    if (t.personal !== '' && !(t.personal === t.file && !t.personalInHome)) out.push({ ...common, rel: t.personal, inHome: t.personalInHome });
  }
  return out;
}

/** The plan for one of those files (null: nothing of offhost's in it). */
export function planAgentFile(path: string, f: Pick<AgentFile, 'shape' | 'jsonc' | 'topLevel'>, show: (p: string) => string): Plan | null {
  return f.shape === 'plugin' ? planOpenCodePlugin(path, show) : planSettingsFile(path, show, { jsonc: f.jsonc, topLevel: f.topLevel });
}

/** Does this hook command run offhost's agent hook (any quoting, any path to offhost)? */
export function isOffhostHookCommand(command: unknown): boolean {
  if (typeof command !== 'string') return false;
  const words = command.replace(/['"]/g, ' ');
  return /(?:^|[\s/])offhost(?:\.[cm]?js)?\s+hook\s+[a-z][a-z-]*(?:\s|$)/.test(words);
}

/**
 * Is this the Claude Code SessionStart hook `offhost init --shims --agent claude-code` adds (`offhost shim env
 * --claude-env-file`: appends the shims' PATH line to $CLAUDE_ENV_FILE)?
 */
export function isOffhostShimEnvCommand(command: unknown): boolean {
  if (typeof command !== 'string') return false;
  const words = command.replace(/['"]/g, ' ');
  return /(?:^|[\s/])offhost(?:\.[cm]?js)?\s+shim\s+env\s(?:.*\s)?--claude-env-file(?:\s|$)/.test(words);
}

export interface Plan {
  path: string;
  /** New text, or null to remove the file. */
  text: string | null;
  what: string;
  /** Instead of writing `text`: what removing it takes (the shims folder). */
  apply?: () => void;
}

interface Pruned {
  hooks: number;
  shimHooks: number;
}

/** Removes our hooks from a settings value; returns how many were removed. */
function pruneHooks(value: unknown, n: Pruned = { hooks: 0, shimHooks: 0 }): number {
  let removed = 0;
  if (Array.isArray(value)) {
    for (let i = value.length - 1; i >= 0; i--) {
      const item = value[i];
      // Copilot keeps its command in `bash` (and `powershell`); every other agent in `command`.
      if (isPlainObject(item) && (isOffhostHookCommand(item.command) || isOffhostHookCommand(item.bash) || isOffhostShimEnvCommand(item.command))) {
        if (isOffhostShimEnvCommand(item.command)) n.shimHooks++;
        else n.hooks++;
        value.splice(i, 1);
        removed++;
        continue;
      }
      const hadHooks = isPlainObject(item) && Array.isArray(item.hooks);
      const inner = pruneHooks(item, n);
      removed += inner;
      // A group (matcher + hooks) that only held ours goes with it.
      if (inner && hadHooks && !(Array.isArray((item as Record<string, unknown>).hooks) && ((item as Record<string, unknown[]>).hooks ?? []).length > 0)) value.splice(i, 1);
    }
  } else if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const inner = pruneHooks(v, n);
      removed += inner;
      if (inner && ((Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.keys(v).length === 0))) delete value[k];
    }
  }
  return removed;
}

/** The plan for one agent settings file (null: nothing of offhost's in it). */
export function planSettingsFile(path: string, show: (p: string) => string, opts: { jsonc: boolean; topLevel: Record<string, unknown> }): Plan | null {
  if (!existsSync(path)) return null;
  const raw = readFileSync(path, 'utf8');
  // Gemini reads its settings with comments stripped (init-agent reads them so): uninstall does too.
  const text = opts.jsonc ? stripJsonComments(raw) : raw;
  if (text.trim() === '') return null;
  const value = parseJson(text, show(path));
  if (!isPlainObject(value)) return null;
  const n: Pruned = { hooks: 0, shimHooks: 0 };
  if (!pruneHooks(value, n)) return null;
  // A file init made holds its format version (Copilot's, Cursor's `"version": 1`) besides the hooks: with
  // the hooks gone and only that left, nothing of the user's is in it.
  const empty = Object.entries(value).every(([k, v]) => k in opts.topLevel && JSON.stringify(v) === JSON.stringify(opts.topLevel[k]));
  const removed = [
    ...(n.hooks ? [`${n.hooks} offhost hook${n.hooks === 1 ? '' : 's'}`] : []),
    ...(n.shimHooks ? [`the SessionStart hook that put the shims on PATH (offhost shim env --claude-env-file)`] : []),
  ].join(' and ');
  return {
    path,
    text: empty ? null : `${JSON.stringify(value, null, jsonIndent(text))}\n`,
    what: `${show(path)}: removed ${removed}${empty ? ' (nothing else was in it: file removed)' : ''}${text !== raw ? ' (its comments dropped, as Gemini reads it)' : ''}`,
  };
}

/** The project's agent files (the OpenCode plugin is removed only while it is still the one offhost generated). */
export function planAgentSettings(project: string, show: (p: string) => string): Plan[] {
  const plans: Plan[] = [];
  for (const f of agentFiles()) {
    if (f.inHome) continue;
    const plan = planAgentFile(join(project, f.rel), f, show);
    if (plan) plans.push(plan);
  }
  return plans;
}

/** offhost's OpenCode plugin file, when it is still the one offhost generated. */
export function planOpenCodePlugin(path: string, show: (p: string) => string): Plan | null {
  if (!existsSync(path) || !readFileSync(path, 'utf8').startsWith(OPENCODE_PLUGIN_HEADER)) return null;
  return { path, text: null, what: `${show(path)}: removed offhost's OpenCode plugin` };
}

/** The first line of every plugin src/adapters/opencode-plugin.ts generates. */
const OPENCODE_PLUGIN_HEADER = '// offhost: checks every command OpenCode is about to run (generated by `offhost init --agent opencode`).';
