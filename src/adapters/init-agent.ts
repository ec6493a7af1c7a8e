// `offhost init --agent <agent>`: writes (or merges) offhost's hook into the agent's settings.
//
// What every written hook command looks like (hooks/README.md "What init writes" documents it exactly, and
// `offhost uninstall` recognises an entry by its `offhost hook <agent>`):
//
//   <root>/<rel>/node_modules/.bin/offhost hook <agent> [ARGS] || { s=$?; [ $s -eq 2 ] || echo "…" >&2; exit 2; }
//
// and for Codex, Cursor and Windsurf that same script inside `/bin/sh -c '…'` (see IN_POSIX_SHELL).
//
// - No machine path in a committed file: <root> is the agent's project directory variable
//   ("$CLAUDE_PROJECT_DIR", "${GEMINI_PROJECT_DIR}") or "$(git rev-parse --show-toplevel)" for agents that set
//   none, and <rel> is where the project's node_modules sits relative to it. When offhost is not installed
//   in the project (a global install, a checkout), there is no such path: the entry then goes to the
//   agent's personal settings file with absolute node and offhost paths, and init says so.
// - Fails closed: `|| … exit 2` turns any failure to start (node_modules gone, dist/ missing mid-build,
//   node missing, a Node upgrade that breaks it: shell status 126/127, node status 1) into exit 2 with a
//   reason on stderr, which Claude Code, Codex, Gemini, Cursor and Windsurf treat as a block. Copilot acts
//   only on a deny on stdout, so its fallback prints one (see FALLBACK).
// - Keeps the user's choices: the arguments after `hook <agent>` in an existing entry (`--mode rewrite`,
//   `--allow-rewrite`…) are kept unless --hook-args replaces them; every other hook and setting is kept.
// - Idempotent: one entry per event and matcher after any number of runs; a file that is not valid JSON
//   (Gemini: JSON with comments, which Gemini strips) is refused with file:line:column and left untouched.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ConfigError, UsageError, positionAt } from '../errors.js';
import type { Io } from '../io.js';
import { type AgentName, AGENTS, HOOK_TIMEOUT_MS, isRecord, shQuote } from './common.js';
import { openCodePlugin } from './opencode-plugin.js';
import { ownExecutableForSettings } from '../own-executable.js';

export interface InitAgentOptions {
  /** Project root whose settings are written (default: io.cwd). */
  project?: string;
  /** Absolute path of the offhost entry script, for the personal-file form (default: the running dist/offhost.cjs). */
  bin?: string;
  /** Node executable, for the personal-file form (default: process.execPath). */
  node?: string;
  /** Hook arguments (e.g. ['--mode', 'rewrite']); undefined keeps what an existing entry has. */
  hookArgs?: string[];
  /** Where node_modules/.bin/offhost is (default: searched from the project up). null: not installed there. */
  projectBin?: string | null;
  /** Print what would be written, write nothing. */
  dryRun?: boolean;
}

type Shape = 'groups' | 'flat' | 'copilot' | 'plugin';

interface AgentTarget {
  /** The committed, project-level file. */
  file: string;
  /** The personal file (under HOME, or project-local and not committed) for an install outside the project. */
  personal: string;
  personalInHome: boolean;
  shape: Shape;
  /** groups: event -> matchers (one group each); flat: event names. */
  events: { event: string; matchers?: string[] }[];
  /** The timeout as the agent spells it (seconds or ms), or null where the agent has no per-hook timeout. */
  timeout: number | null;
  named?: boolean;
  /** Extra fields of a flat entry, or of each hook of a group. */
  extra?: Record<string, unknown>;
  /** The shell expression for the directory <rel> is relative to. */
  root: 'CLAUDE_PROJECT_DIR' | 'GEMINI_PROJECT_DIR' | 'git';
  jsonc?: boolean;
  topLevel?: Record<string, unknown>;
  notes: string[];
}

const S = (agent: AgentName) => HOOK_TIMEOUT_MS[agent] / 1000;

export const TARGETS: Record<AgentName, AgentTarget> = {
  'claude-code': {
    file: '.claude/settings.json',
    personal: '.claude/settings.local.json',
    personalInHome: false,
    shape: 'groups',
    events: [{ event: 'PreToolUse', matchers: ['Bash|Monitor|PowerShell|mcp__.*'] }],
    timeout: S('claude-code'),
    // Claude Code's own fail-closed switch (2.1.295: a hook that cannot start, times out or exits with an
    // unexpected code blocks the action), besides the watchdog and the `||` tail.
    extra: { onFailure: 'block' },
    root: 'CLAUDE_PROJECT_DIR',
    notes: ['Claude Code reads it at start: restart running sessions (or review it in /hooks).'],
  },
  codex: {
    file: '.codex/hooks.json',
    personal: '.codex/hooks.json',
    personalInHome: true,
    shape: 'groups',
    events: [{ event: 'PreToolUse', matchers: ['Bash', 'mcp__.*'] }],
    timeout: S('codex'),
    root: 'git',
    notes: [
      'Codex runs project hooks only in a trusted project, and asks you to trust each new or changed hook command once: open /hooks in Codex and approve it (again after this command changed it).',
      'Hooks are on by default since Codex 0.124; older builds need `[features] codex_hooks = true` in config.toml.',
      'Reroutes are answered as a deny carrying the command to run (suggest mode); `--hook-args "--mode rewrite"` rewrites instead.',
    ],
  },
  gemini: {
    file: '.gemini/settings.json',
    personal: '.gemini/settings.json',
    personalInHome: true,
    shape: 'groups',
    events: [{ event: 'BeforeTool', matchers: ['run_shell_command|mcp__.*'] }],
    timeout: HOOK_TIMEOUT_MS.gemini,
    named: true,
    root: 'GEMINI_PROJECT_DIR',
    jsonc: true,
    notes: [
      'Gemini CLI loads project settings at start: restart running sessions. Check it with /hooks.',
      'Gemini ignores a project\'s .gemini/settings.json (hooks included) until the folder is trusted (/permissions, or trust it when asked at start).',
    ],
  },
  cursor: {
    file: '.cursor/hooks.json',
    personal: '.cursor/hooks.json',
    personalInHome: true,
    shape: 'flat',
    events: [{ event: 'beforeShellExecution' }, { event: 'beforeMCPExecution' }],
    timeout: null,
    // Cursor's own fail-closed switch (a crash, a timeout or bad JSON blocks), besides the `||` tail.
    extra: { timeout: S('cursor'), failClosed: true },
    root: 'git',
    topLevel: { version: 1 },
    notes: ['Cursor reloads hooks.json when it changes; its Hooks settings tab lists the hook and its output.'],
  },
  copilot: {
    file: '.github/hooks/offhost.json',
    personal: '',
    personalInHome: true,
    shape: 'copilot',
    events: [{ event: 'preToolUse' }],
    timeout: S('copilot'),
    root: 'git',
    topLevel: { version: 1 },
    notes: [
      'Copilot CLI reads .github/hooks/*.json from the repository; the coding agent reads them from the default branch: commit and merge this file.',
      'Copilot acts on a deny only: reroutes are answered as a deny carrying the command to run.',
    ],
  },
  windsurf: {
    file: '.windsurf/hooks.json',
    personal: '.codeium/windsurf/hooks.json',
    personalInHome: true,
    shape: 'flat',
    events: [{ event: 'pre_run_command' }, { event: 'pre_mcp_tool_use' }],
    timeout: null,
    extra: { show_output: true },
    root: 'git',
    notes: ['Windsurf merges system, user and workspace hooks.json; a block shows offhost\'s reason in Cascade (show_output).'],
  },
  opencode: {
    file: '.opencode/plugins/offhost.js',
    personal: '.config/opencode/plugins/offhost.js',
    personalInHome: true,
    shape: 'plugin',
    events: [],
    timeout: S('opencode'),
    root: 'git',
    notes: ['OpenCode loads .opencode/plugins/ at start: restart running sessions.'],
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

/** node_modules/.bin/offhost in the project or a folder above it (a hoisted workspace install), or null. */
export function findProjectBin(project: string): string | null {
  let dir = project;
  for (;;) {
    const p = join(dir, 'node_modules', '.bin', 'offhost');
    if (existsSync(p)) return p;
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** The git work tree root above `dir`, or null. */
function gitRoot(dir: string): string | null {
  for (let d = dir; ; ) {
    if (existsSync(join(d, '.git'))) return d;
    const up = dirname(d);
    if (up === d) return null;
    d = up;
  }
}

/** The reason printed when the hook cannot start, and the status the agent blocks on. */
const CANNOT_RUN = (agent: AgentName) => `offhost hook ${agent} could not run (status $s), so the tool call is refused; fix: npm ci (reinstall offhost) in the project, or offhost init --agent ${agent} again`;

/**
 * Seconds the hook command lets offhost run before it stops it and answers "blocked" itself: 3 s before
 * the timeout init writes, because Claude Code, Codex and Gemini CLI kill a hook at their timeout and then
 * run the tool. It bounds everything, node's own start included (a NODE_OPTIONS preload that never returns,
 * a stalled disk), which a deadline inside offhost could not.
 */
export const watchdogSeconds = (agent: AgentName): number => Math.floor((HOOK_TIMEOUT_MS[agent] - 3000) / 1000);

/** The line the watchdog prints when it stopped offhost. */
const HUNG = (agent: AgentName) => `offhost hook ${agent} gave no answer within ${watchdogSeconds(agent)} s and was stopped, so the tool call is refused; see why with: offhost doctor (a NODE_OPTIONS preload, a config file that cannot be read)`;

/**
 * The hook script: `launch` (the command that runs `offhost hook <agent> …`) under a watchdog, then what
 * the agent takes as a block for any status but offhost's own answers. POSIX sh only, so it runs the same
 * under macOS's /bin/sh and bash 3.2, dash, bash, zsh (no GNU `timeout`, no `setsid`):
 *
 *   exec 3<&0; LAUNCH <&3 3<&- & p=$!;                       offhost in the background, on the hook's stdin
 *   ( f=; trap '[ -n "$f" ] || { kill $k; exit 0; }' TERM;   the watchdog: stops offhost after N s,
 *     sleep N 4>&- & k=$!;
 *     wait $k && { f=1; kill -9 $p; echo HUNG >&4; } )       saying so on the hook's stderr (fd 4)
 *     4>&2 </dev/null >/dev/null 2>&1 3<&- & w=$!;           and holding none of the agent's pipes open
 *   wait $p; s=$?; kill $w;                                  offhost's status; the watchdog ends (and its sleep)
 *   [ $s -eq 0 ] && exit 0; …                                0 (and 2) are offhost's answers; anything else blocks
 *
 * A background job's stdin is /dev/null unless redirected (POSIX), hence the copy on fd 3. The agents read
 * the hook's output until its pipes close (Gemini waits for 'close'): the sleep gets /dev/null for all of
 * them and not fd 4, so that a finished hook is not held open for N s. That matters when offhost fails at
 * once (uninstalled: status 127 in a millisecond): `kill $w` can then reach the watchdog after it started
 * the sleep and before `k=$!`, its trap kills nothing, and a sleep holding the hook's stderr kept the
 * agent waiting N s on one call in five. And it kills before it speaks: an agent that stopped reading (quit,
 * or killed the hook itself) makes the echo die of SIGPIPE, which would leave the hung offhost running.
 * Once it has fired (`f`), the TERM the script sends it when offhost is gone (`kill $w`) no longer ends
 * it: that TERM could come between the kill and the echo, and under load the reason was lost (the agent
 * was told offhost "could not run" instead).
 */
function guarded(agent: AgentName, launch: string): string {
  const n = watchdogSeconds(agent);
  const watchdog = `( f=; trap '[ -n "$f" ] || { kill $k 2>/dev/null; exit 0; }' TERM; sleep ${n} 4>&- & k=$!; wait $k && { f=1; kill -9 $p; echo "${HUNG(agent)}" >&4; } ) 4>&2 </dev/null >/dev/null 2>&1 3<&- & w=$!`;
  const head = `exec 3<&0; ${launch} <&3 3<&- & p=$!; ${watchdog}; wait $p; s=$?; kill $w 2>/dev/null; [ $s -eq 0 ] && exit 0; `;
  const msg = CANNOT_RUN(agent);
  if (agent === 'copilot') {
    // Copilot blocks on a deny printed on stdout (exit 0); a failing hook is not documented to block.
    return `${head}printf '{"permissionDecision":"deny","permissionDecisionReason":"%s"}\\n' "${msg}"; echo "${msg}" >&2; exit 0`;
  }
  if (agent === 'cursor') {
    return `${head}[ $s -eq 2 ] && exit 2; printf '{"permission":"deny","user_message":"%s","agent_message":"%s"}\\n' "${msg}" "${msg}"; echo "${msg}" >&2; exit 2`;
  }
  return `${head}[ $s -eq 2 ] || echo "${msg}" >&2; exit 2`;
}

/**
 * Agents that run the hook command through a shell offhost does not choose, or through one nobody documents:
 * Codex runs `$SHELL -lc COMMAND` (codex-rs/hooks/src/engine/command_runner.rs), and with fish as the
 * login shell the POSIX form is a parse error on which fish 3 exits 0 (the hook never runs, the tool
 * does); Cursor and Windsurf say only that hooks are "shell commands". For them the command is one
 * `/bin/sh -c '…'`, which POSIX shells, zsh and fish all read as the same three words, and which a runner
 * that splits the string shell-style (shlex) and execs it without a shell runs just the same.
 */
const IN_POSIX_SHELL: ReadonlySet<AgentName> = new Set<AgentName>(['codex', 'cursor', 'windsurf']);

/** `/bin/sh -c '<script>'`, quoted so that sh, bash, zsh and fish all pass the script through unchanged. */
export function inPosixShell(script: string): string {
  // Inside single quotes fish (unlike POSIX) reads `\\` and `\'` as escapes: such a script would reach sh changed.
  if (/\\[\\']/.test(script)) throw new UsageError(`a hook argument ends in a backslash or holds two in a row, which fish would read differently from sh: ${script}`);
  return `/bin/sh -c '${script.replace(/'/g, `'\\''`)}'`;
}

/**
 * Where the project-relative path starts. Gemini CLI sets GEMINI_PROJECT_DIR to the session's cwd (hookRunner.ts:
 * `GEMINI_PROJECT_DIR: input.cwd`), which is a subdirectory when Gemini was started in one: so in a git work
 * tree its hook starts at the checkout's top, like the agents that set no variable (the hook runs in that cwd).
 */
function rootOf(t: AgentTarget, project: string): AgentTarget['root'] {
  return t.root === 'GEMINI_PROJECT_DIR' && gitRoot(project) !== null ? 'git' : t.root;
}

/** The shell expression of the directory the project-relative path starts at. */
function rootExpr(root: AgentTarget['root']): string {
  if (root === 'git') return '"$(git rev-parse --show-toplevel)"';
  // Gemini CLI replaces the text `$GEMINI_PROJECT_DIR` in the command with the shell-quoted directory before
  // bash reads it (hookRunner.ts expandCommand), which inside our double quotes leaves literal quotes or
  // backslashes in a path with a space or an `@`; it also exports the variable, so the braced spelling
  // (not replaced) is expanded by bash itself.
  if (root === 'GEMINI_PROJECT_DIR') return '"${GEMINI_PROJECT_DIR}"';
  return `"$${root}"`;
}

const wrap = (agent: AgentName, script: string): string => (IN_POSIX_SHELL.has(agent) ? inPosixShell(script) : script);

export interface HookCommand {
  command: string;
  /** true: the committed project file; false: the personal file (absolute paths). */
  projectRelative: boolean;
}

/** The hook command for an agent; `args` are the hook arguments (after `hook <agent>`). */
export function hookCommand(agent: AgentName, project: string, args: readonly string[], opts: InitAgentOptions = {}): HookCommand {
  const t = TARGETS[agent];
  const tail = ['hook', agent, ...args].map(shQuote).join(' ');
  const bin = opts.projectBin === undefined ? findProjectBin(project) : opts.projectBin;
  if (bin) {
    const root = rootOf(t, project);
    const base = root === 'git' ? gitRoot(project) : project;
    if (base) {
      const rel = relative(base, bin);
      if (!rel.startsWith('..') || root !== 'git') return { command: wrap(agent, guarded(agent, `${rootExpr(root)}/${rel.split('/').map(shQuote).join('/')} ${tail}`)), projectRelative: true };
    }
  }
  const node = opts.node ?? process.execPath;
  const abs = opts.bin ?? defaultBin();
  return { command: wrap(agent, guarded(agent, `${shQuote(node)} ${shQuote(abs)} ${tail}`)), projectRelative: false };
}

/**
 * Does `command` carry the watchdog and fallback this version writes around its launch (whatever the launch)?
 * An entry written by an older offhost still blocks, but its watchdog may not be this one (one that spoke
 * before it killed left a hung offhost running once the agent quit): doctor asks for `init` again.
 */
export function guardIsCurrent(agent: AgentName, command: string): boolean {
  const mark = 'OFFHOST-LAUNCH';
  const [head, tail] = wrap(agent, guarded(agent, mark)).split(mark) as [string, string];
  return command.length > head.length + tail.length && command.startsWith(head) && command.endsWith(tail);
}

/** Is this hook entry one of ours (any install path, any options)? */
export function isOurs(command: unknown, agent: AgentName): boolean {
  if (typeof command !== 'string') return false;
  return /offhost/.test(command) && new RegExp(`\\bhook\\s+'?${agent.replace('-', '\\-')}'?(\\s|$)`).test(command);
}

/** Shell words of a command, quotes removed (enough for the commands init writes and users edit). */
function shellWords(s: string): string[] {
  const out: string[] = [];
  let w = '';
  let has = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === "'") {
      has = true;
      const j = s.indexOf("'", i + 1);
      w += s.slice(i + 1, j < 0 ? s.length : j);
      i = j < 0 ? s.length : j;
    } else if (c === '"') {
      has = true;
      for (i++; i < s.length && s[i] !== '"'; i++) w += s[i] === '\\' && i + 1 < s.length ? s[++i] : s[i];
    } else if (c === '\\' && i + 1 < s.length) {
      has = true;
      w += s[++i];
    } else if (/\s/.test(c)) {
      if (has) out.push(w);
      w = '';
      has = false;
    } else if ((c === '|' || c === ';' || c === '&') && !has) {
      out.push(c === '|' && s[i + 1] === '|' ? '||' : c);
      if (s[i + 1] === c) i++;
    } else {
      has = true;
      w += c;
    }
  }
  if (has) out.push(w);
  return out;
}

/** The arguments after `hook <agent>` in an existing command, up to the fallback (`||`, `;`, `&`). */
export function hookArgsOf(command: string, agent: AgentName): string[] {
  let words = shellWords(command);
  // `/bin/sh -c '<script>'` (IN_POSIX_SHELL): the arguments are in the script.
  if (words.length === 3 && /(^|\/)(ba|da|z)?sh$/.test(words[0] as string) && words[1] === '-c') words = shellWords(words[2] as string);
  const i = words.findIndex((w, k) => w === 'hook' && words[k + 1] === agent);
  if (i < 0) return [];
  const out: string[] = [];
  for (const w of words.slice(i + 2)) {
    // The fallback (`||`, `;`), the watchdog's job (`&`) and its redirections (`<&3`) end the arguments.
    if (w === '||' || w === ';' || w === '&' || w === '|' || w === '{' || /^[0-9]*[<>]/.test(w)) break;
    out.push(w);
  }
  return out;
}

/**
 * JSON with `//` and `/* *\/` comments removed outside strings (Gemini CLI reads its settings through
 * strip-json-comments: packages/cli/src/config/settings.ts). Offsets are kept (comments become spaces) so
 * error positions still point into the file.
 */
export function stripJsonComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      let j = i;
      while (j < text.length && text[j] !== '\n') j++;
      out += ' '.repeat(j - i);
      i = j - 1;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const j = end < 0 ? text.length : end + 2;
      out += text.slice(i, j).replace(/[^\n]/g, ' ');
      i = j - 1;
    } else out += c;
  }
  return out;
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
      return /end of (JSON )?input|Unterminated|Expected .* after|Bad control character/i.test(err instanceof Error ? err.message : '');
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

/** Parses a settings file (JSON, or JSON with comments when `jsonc`); invalid JSON is a ConfigError with file:line:column. */
export function readSettings(path: string, jsonc = false): { settings: Record<string, unknown>; hadComments: boolean } {
  if (!existsSync(path)) return { settings: {}, hadComments: false };
  const raw = readFileSync(path, 'utf8');
  const text = jsonc ? stripJsonComments(raw) : raw;
  const hadComments = text !== raw;
  if (text.trim() === '') return { settings: {}, hadComments };
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
    } else {
      const p = positionAt(text, m ? Number(m[1]) : syntaxErrorOffset(text));
      line = p.line;
      column = p.column;
    }
    throw new ConfigError(`not valid JSON (${msg.replace(/ in JSON at position \d+.*$/, '')}); fix it by hand, offhost will not overwrite it`, path, line, column);
  }
  if (!isRecord(value)) throw new ConfigError('not a JSON object; offhost will not overwrite it', path, 1, 1);
  return { settings: value, hadComments };
}

function listAt(hooks: Record<string, unknown>, event: string, file: string): unknown[] {
  const list = hooks[event] === undefined ? [] : hooks[event];
  if (!Array.isArray(list)) throw new ConfigError(`"hooks.${event}" is not an array; offhost will not overwrite it`, file);
  hooks[event] = list;
  return list;
}

/** The command of one entry, wherever the agent keeps it. */
const commandOf = (h: Record<string, unknown>, shape: Shape): unknown => (shape === 'copilot' ? h.bash : h.command);

/**
 * Returns the settings with our entries added or updated, the arguments found in an existing entry, and
 * whether anything changed.
 */
export function mergeHook(
  settings: Record<string, unknown>,
  agent: AgentName,
  makeCommand: (found: string[] | null) => string,
  file: string,
): { settings: Record<string, unknown>; changed: boolean; command: string } {
  const t = TARGETS[agent];
  const out = structuredClone(settings);
  for (const [k, v] of Object.entries(t.topLevel ?? {})) if (out[k] === undefined) out[k] = v;
  const hooks = out.hooks === undefined ? {} : out.hooks;
  if (!isRecord(hooks)) throw new ConfigError('"hooks" is not an object; offhost will not overwrite it', file);
  out.hooks = hooks;

  // 1. Take every entry of ours out (remembering the first one's extra fields and arguments).
  let found: string[] | null = null;
  let kept: Record<string, unknown> = {};
  for (const { event } of t.events) {
    const list = listAt(hooks, event, file);
    for (let gi = list.length - 1; gi >= 0; gi--) {
      const g = list[gi];
      if (!isRecord(g)) continue;
      if (t.shape === 'groups') {
        if (!Array.isArray(g.hooks)) continue;
        const hs = g.hooks as unknown[];
        for (let i = hs.length - 1; i >= 0; i--) {
          const h = hs[i];
          if (!isRecord(h) || !isOurs(h.command, agent)) continue;
          found = hookArgsOf(h.command as string, agent);
          kept = h;
          hs.splice(i, 1);
        }
        if (hs.length === 0) list.splice(gi, 1);
      } else if (isOurs(commandOf(g, t.shape), agent)) {
        found = hookArgsOf(commandOf(g, t.shape) as string, agent);
        kept = g;
        list.splice(gi, 1);
      }
    }
  }
  // 2. Put one entry per event (and matcher) back, at the end.
  const command = makeCommand(found);
  for (const { event, matchers } of t.events) {
    const list = listAt(hooks, event, file);
    if (t.shape === 'groups') {
      const entry: Record<string, unknown> = { ...kept, type: 'command', command, ...(t.timeout !== null ? { timeout: t.timeout } : {}), ...(t.extra ?? {}) };
      if (t.named) entry.name = 'offhost';
      for (const matcher of matchers ?? []) list.push({ matcher, hooks: [entry] });
    } else if (t.shape === 'copilot') {
      list.push({ ...kept, type: 'command', bash: command, cwd: '.', timeoutSec: t.timeout });
    } else {
      list.push({ ...kept, command, ...(t.extra ?? {}) });
    }
  }
  return { settings: out, changed: JSON.stringify(out) !== JSON.stringify(settings), command };
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
  const probe = hookCommand(name, project, [], opts);
  let file = join(project, t.file);
  const notes = [...t.notes];
  if (!probe.projectRelative) {
    if (!t.personal) {
      throw new UsageError(`offhost is not installed in this project (no node_modules/.bin/offhost in ${project} or above), and ${name} has no personal hooks file to point at another install: npm install --save-dev offhost, then run this again`);
    }
    const home = io.env.HOME;
    if (t.personalInHome && !home) throw new UsageError('HOME is not set: cannot find the personal settings file');
    file = t.personalInHome ? join(home as string, t.personal) : join(project, t.personal);
    notes.unshift(`offhost is not installed in this project (no node_modules/.bin/offhost), so the hook goes to your personal ${t.personalInHome ? '' : 'project '}settings (${file}) with this machine's paths; npm install --save-dev offhost and run this again to put a portable hook in ${t.file}.`);
  }
  const shown = relative(io.cwd, file) || file;

  if (t.shape === 'plugin') {
    const args = opts.hookArgs ?? [];
    const text = openCodePlugin(probe.projectRelative ? { rel: relative(gitRoot(project) ?? project, findProjectBin(project) as string) } : { abs: [opts.node ?? process.execPath, opts.bin ?? defaultBin()] }, args, HOOK_TIMEOUT_MS.opencode);
    if (opts.dryRun) {
      io.stdout(`# ${shown}\n${text}`);
      return 0;
    }
    const same = existsSync(file) && readFileSync(file, 'utf8') === text;
    if (!same) writeAtomic(file, text);
    io.stdout(`${same ? 'already set up:' : 'wrote'} ${shown}: OpenCode plugin (tool.execute.before) -> offhost hook opencode${args.length ? ` ${args.join(' ')}` : ''}\n`);
    for (const n of notes) io.stdout(`  ${n}\n`);
    return 0;
  }

  const { settings, hadComments } = readSettings(file, t.jsonc === true);
  const before = JSON.stringify(settings);
  const { settings: merged, changed, command } = mergeHook(settings, name, (found) => hookCommand(name, project, opts.hookArgs ?? found ?? [], opts).command, file);
  const text = `${JSON.stringify(merged, null, 2)}\n`;
  if (opts.dryRun) {
    io.stdout(`# ${shown}\n${text}`);
    return 0;
  }
  if (changed) {
    if (hadComments) {
      // Gemini's comments cannot survive a JSON rewrite: keep the original next to it.
      writeFileSync(`${file}.offhost-backup`, readFileSync(file));
      notes.unshift(`the comments in ${shown} could not be kept; the file as it was is in ${shown}.offhost-backup`);
    }
    writeAtomic(file, text);
    if (name === 'codex' && before.includes('offhost')) notes.unshift('the hook command changed: Codex skips it until you trust it again in /hooks.');
  }
  const where = t.events.map((e) => (e.matchers ? `${e.event} (matcher ${e.matchers.join(', ')})` : e.event)).join(', ');
  io.stdout(`${changed ? 'wrote' : 'already set up:'} ${shown}: ${where} -> ${command}\n`);
  for (const n of notes) io.stdout(`  ${n}\n`);
  return 0;
}
