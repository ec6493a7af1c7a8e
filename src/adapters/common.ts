// What every agent adapter shares: the classify function it is handed, the reply it gives back, the
// reasons it writes, and the fail-closed helpers. Pure: no fs, no process, no clock (the CLI wraps these).
import type { Decision, Verdict } from '../types.js';
import { bareOrSingleQuote } from '../routes/quote.js';

/** The guard's classify (src/policy/guard.ts `Guard.classify`): never throws by contract; we still guard. */
export type Classify = (line: string, at?: { cwd?: string; env?: NodeJS.ProcessEnv }) => Verdict;

export type AgentName = 'claude-code' | 'codex' | 'gemini' | 'cursor' | 'copilot' | 'windsurf' | 'opencode';
export const AGENTS: readonly AgentName[] = ['claude-code', 'codex', 'gemini', 'cursor', 'copilot', 'windsurf', 'opencode'];

/**
 * The hook timeout `offhost init --agent` writes for each agent (ms). Every deadline inside the hook stays
 * below it (see hookDeadlines): an agent that kills a hook at its timeout runs the tool anyway.
 */
export const HOOK_TIMEOUT_MS: Record<AgentName, number> = {
  'claude-code': 30_000,
  codex: 30_000,
  gemini: 30_000,
  cursor: 30_000,
  copilot: 30_000,
  windsurf: 30_000,
  opencode: 30_000,
};
/** Left for node start-up, config loading and writing the answer, below the agent's timeout. */
const HOOK_MARGIN_MS = 6_000;
export const STDIN_DEFAULT_MS = 10_000;
export const BUDGET_DEFAULT_MS = 5_000;

/**
 * The stdin and classification deadlines for one hook call: OFFHOST_HOOK_STDIN_MS / OFFHOST_HOOK_BUDGET_MS
 * (or the defaults), each capped so that both together end before the agent's timeout. `capped` names a
 * variable that asked for more (said once on stderr by the caller).
 */
export function hookDeadlines(agent: AgentName, env: NodeJS.ProcessEnv): { stdinMs: number; budgetMs: number; capped: string[] } {
  const room = HOOK_TIMEOUT_MS[agent] - HOOK_MARGIN_MS;
  const want = (name: string, dflt: number): number => (Number(env[name]) > 0 ? Number(env[name]) : dflt);
  const capped: string[] = [];
  let stdinMs = want('OFFHOST_HOOK_STDIN_MS', STDIN_DEFAULT_MS);
  let budgetMs = want('OFFHOST_HOOK_BUDGET_MS', BUDGET_DEFAULT_MS);
  const stdinCap = Math.floor(room / 2);
  if (stdinMs > stdinCap) {
    stdinMs = stdinCap;
    capped.push(`OFFHOST_HOOK_STDIN_MS (capped at ${stdinCap})`);
  }
  const budgetCap = room - stdinMs;
  if (budgetMs > budgetCap) {
    budgetMs = budgetCap;
    capped.push(`OFFHOST_HOOK_BUDGET_MS (capped at ${budgetCap})`);
  }
  return { stdinMs, budgetMs, capped };
}

/** How a reroute is answered: the command is replaced in the tool call, or denied with the command to run. */
export type RerouteMode = 'rewrite' | 'suggest';

export interface HookOptions {
  /** Reroute answer; each agent has its default (claude-code, gemini: rewrite; codex: suggest). */
  mode?: RerouteMode;
  /** claude-code rewrite mode: answer `allow` instead of `ask` (the user opted in). */
  allowRewrite?: boolean;
  /** The hook process's environment (OFFHOST_SESSION there wins over the agent's session id). */
  env: NodeJS.ProcessEnv;
  /**
   * The hook process's own directory: where the agent started it (the workspace root for Windsurf's and
   * Cursor's project hooks). Used only for events that carry no directory at all (MCP tool events).
   */
  processCwd?: string;
  /**
   * The project config's `hook:` section for a directory (offhost.config.yaml), used where neither the
   * command line nor the environment decided. Throws like loadGuard on a bad config (then ignored: the
   * classification reports it).
   */
  settingsAt?: (cwd: string) => { mode?: RerouteMode; allowRewrite?: boolean };
}

/** Mode and allow-rewrite for one event: command line / environment, then project config, then default. */
export function effectiveSettings(opts: HookOptions, cwd: string, defaultMode: RerouteMode): { mode: RerouteMode; allowRewrite: boolean } {
  let cfg: { mode?: RerouteMode; allowRewrite?: boolean } = {};
  try {
    cfg = opts.settingsAt?.(cwd) ?? {};
  } catch {
    /* a bad config is reported by the classification itself */
  }
  return { mode: opts.mode ?? cfg.mode ?? defaultMode, allowRewrite: opts.allowRewrite === true || cfg.allowRewrite === true };
}

/** One decision as it goes to the audit log (audit-log.ts adds the time). */
export interface AuditRecord {
  agent: AgentName | 'shell' | 'shim';
  session: string | null;
  cwd: string | null;
  command: string | null;
  decision: Decision;
  rule: string | null;
  reason?: string;
  /** What the agent was told to run instead (reroute), in the mode used. */
  rewrite?: string;
  mode?: RerouteMode;
}

/** What a hook process answers: exactly these bytes and this status. */
export interface HookReply {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** null when nothing was decided about a command (another tool passed through). */
  audit: AuditRecord | null;
}

/** Hook-level rule ids, for refusals that do not come from the rule packs. */
export const HOOK_RULES = {
  /** The event JSON is malformed, truncated, of the wrong event, or lacks a field. */
  input: 'hook-input',
  /** A NUL byte in the command: bash would cut the word there; what runs is not what was checked. */
  nul: 'nul-byte',
  /** Classification did not finish inside the time budget, or the command is too large to check. */
  budget: 'hook-budget',
  /** offhost itself failed (bad config, a bug): refused rather than let through unchecked. */
  internal: 'internal-error',
} as const;

/** A verdict made up by the hook itself (input errors, budget, internal failures). */
export function refusal(rule: string, reason: string): Verdict {
  return { decision: 'deny', rule, reason, route: null, rewrite: null, commands: [] };
}

/** Quote a word for bash: bare when it is plainly safe, else single quotes (src/routes/quote.ts). */
export const shQuote = bareOrSingleQuote;

/** Join an argv into one bash line (Codex's legacy `shell` tool sends `command` as an argv array). */
export function joinArgv(argv: readonly string[]): string {
  return argv.map(shQuote).join(' ');
}

const AI_OF: Record<AgentName, string> = {
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
  cursor: 'cursor',
  copilot: 'copilot',
  windsurf: 'windsurf',
  opencode: 'opencode',
};

/** The `ai` a lock taken for this agent records (POLICY R3: claude | codex | gemini | ...). */
export function aiOf(agent: AgentName): string {
  return AI_OF[agent];
}

/**
 * The lock session tag for an agent session: `OFFHOST_SESSION` from the hook's environment when the user
 * set one, else `<ai>-<agent session id>` with anything outside [A-Za-z0-9._:@-] replaced (max 128 chars).
 */
export function sessionTag(agent: AgentName, sessionId: string | null, env: NodeJS.ProcessEnv): string | null {
  const fromEnv = env.OFFHOST_SESSION;
  if (fromEnv && fromEnv.trim() !== '') return fromEnv;
  if (!sessionId) return null;
  const clean = sessionId.replace(/[^A-Za-z0-9._:@-]/g, '_').slice(0, 120);
  return clean.startsWith(`${aiOf(agent)}-`) ? clean : `${aiOf(agent)}-${clean}`;
}

/**
 * The command an agent runs instead of a rerouted one: the guard's rewrite (always ONE simple command,
 * `<offhost> run [...] -- '<line>'`, src/adapters/run-rewrite.ts) behind `env OFFHOST_SESSION=… OFFHOST_AI=…`, so
 * that `offhost run` takes (and releases) the VM lock in this session's name. `env` rather than `export …;`:
 * the line stays one argv that survives a shlex split and exec (Codex's argv-style shell tools), and in a
 * shell it means the same.
 */
export function withSession(rewrite: string, session: string | null, agent: AgentName): string {
  const parts: string[] = [];
  if (session) parts.push(`OFFHOST_SESSION=${shQuote(session)}`);
  parts.push(`OFFHOST_AI=${aiOf(agent)}`);
  return `env ${parts.join(' ')} ${rewrite}`;
}

/** Names of tool-input fields that carry a command line in tools offhost does not know by name (MCP tools). */
export const COMMAND_FIELDS = ['command', 'cmd', 'commandLine', 'command_line', 'script', 'shell_command'] as const;

/**
 * The command line an unknown tool's input names, if any: a string in one of COMMAND_FIELDS, or an argv
 * array there (joined with bash quoting). null when the input names none (the tool is not judged).
 */
export function commandInInput(input: unknown): string | null {
  if (!isRecord(input)) return null;
  for (const k of COMMAND_FIELDS) {
    const v = input[k];
    if (typeof v === 'string' && v.trim() !== '') return v;
    if (Array.isArray(v) && v.length > 0 && v.every((w) => typeof w === 'string')) return joinArgv(v as string[]);
  }
  return null;
}

function ruleText(v: Verdict): string {
  return v.rule ? ` (rule ${v.rule})` : '';
}

/** The reason given with a deny. */
export function denyReason(v: Verdict): string {
  return `offhost refused this command${ruleText(v)}: ${v.reason}`;
}

/** The reason given with a rewrite: what happened and what will run (shown to the user on `ask`). */
export function rewriteReason(v: Verdict, command: string): string {
  const vm = v.route ? ` on VM ${v.route.vm}` : '';
  return `offhost rerouted this command${ruleText(v)} to run${vm} instead of this laptop: ${v.reason}\nIt now runs: ${command}`;
}

/** The reason given in suggest mode: a deny that carries the exact command to run instead. */
export function suggestReason(v: Verdict, command: string): string {
  const vm = v.route ? ` on VM ${v.route.vm}` : ' on a test VM';
  return (
    `offhost: this command is heavy${ruleText(v)} and must run${vm}, not on this laptop: ${v.reason}\n` +
    `Run exactly this instead (it takes the VM lock, runs it there and releases the lock):\n${command}`
  );
}

/** Classify, turning a throw (the contract says never, but a bug must not let a command through) into a deny. */
export function safeClassify(classify: Classify, line: string, at: { cwd?: string; env?: NodeJS.ProcessEnv }): Verdict {
  if (line.includes('\0')) {
    return refusal(HOOK_RULES.nul, 'the command contains a NUL byte; bash would run something other than what can be checked');
  }
  try {
    const v = classify(line, at);
    if (!v || (v.decision !== 'allow' && v.decision !== 'deny' && v.decision !== 'reroute')) {
      return refusal(HOOK_RULES.internal, 'offhost could not classify this command (no verdict)');
    }
    if (v.decision === 'reroute' && !v.rewrite) {
      return refusal(HOOK_RULES.internal, `${v.reason} (rerouted, but no command to run instead was produced)`);
    }
    return v;
  } catch (err) {
    return refusal(HOOK_RULES.internal, `offhost failed while checking this command: ${errorText(err)}`);
  }
}

/**
 * A PowerShell line judged through the bash guard (src/adapters/powershell.ts says what is read): the
 * worst verdict of its candidate commands (deny over reroute over allow).
 */
export function classifyPowerShell(classify: Classify, line: string, at: { cwd?: string; env?: NodeJS.ProcessEnv }, candidates: (l: string) => { lines: string[]; tooMany: boolean }): Verdict {
  if (line.includes('\0')) return safeClassify(classify, line, at);
  const { lines, tooMany } = candidates(line);
  if (tooMany) return refusal(HOOK_RULES.budget, 'this PowerShell line names too many commands for offhost to check one by one; split it up');
  let worst: Verdict | null = null;
  for (const l of lines) {
    const v = safeClassify(classify, l, at);
    if (v.decision === 'deny') return { ...v, reason: `${v.reason} (read from the PowerShell line as \`${l}\`)` };
    if (v.decision === 'reroute' && !worst) worst = { ...v, reason: `${v.reason} (read from the PowerShell line as \`${l}\`)` };
  }
  return worst ?? { decision: 'allow', rule: null, reason: 'no rule matched', route: null, rewrite: null, commands: [] };
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The event JSON, parsed; a readable reason when it is not an object. */
export function parseEvent(raw: string): { event: Record<string, unknown> } | { error: string } {
  if (raw.trim() === '') return { error: 'no hook event on standard input' };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    // Node's own message varies between versions; keep ours stable (golden tests) and say what we got.
    void err;
    return { error: `hook event is not valid JSON (malformed or truncated input, ${raw.length} characters)` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { error: 'hook event is not a JSON object' };
  }
  return { event: value as Record<string, unknown> };
}

/** A required string field, or an error naming it. */
export function stringField(obj: Record<string, unknown>, key: string, where = ''): string | { error: string } {
  const v = obj[key];
  if (v === undefined || v === null) return { error: `hook event has no ${where}${key}` };
  if (typeof v !== 'string') return { error: `hook event field ${where}${key} is ${aJsonType(v)}, not a string` };
  return v;
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** "an array", "a string", "null": the JSON type with its article, for messages. */
export function aJsonType(v: unknown): string {
  const t = jsonType(v);
  return t === 'null' ? 'null' : /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function json(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}
