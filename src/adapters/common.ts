// What every agent adapter shares: the classify function it is handed, the reply it gives back, the
// reasons it writes, and the fail-closed helpers. Pure: no fs, no process, no clock (the CLI wraps these).
import type { Decision, Verdict } from '../types.js';
import { bareOrSingleQuote } from '../routes/quote.js';

/** The guard's classify (src/policy/guard.ts `Guard.classify`): never throws by contract; we still guard. */
export type Classify = (line: string, at?: { cwd?: string; env?: NodeJS.ProcessEnv }) => Verdict;

export type AgentName = 'claude-code' | 'codex' | 'gemini';
export const AGENTS: readonly AgentName[] = ['claude-code', 'codex', 'gemini'];

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

const AI_OF: Record<AgentName, string> = { 'claude-code': 'claude', codex: 'codex', gemini: 'gemini' };

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
 * The command an agent runs instead of a rerouted one: the guard's rewrite, with the agent's session and ai
 * exported first so that `offhost run` takes (and releases) the VM lock in this session's name. `export`
 * rather than a `VAR=x` prefix, because a prefix would only reach the first command of a compound rewrite.
 */
export function withSession(rewrite: string, session: string | null, agent: AgentName): string {
  const parts: string[] = [];
  if (session) parts.push(`OFFHOST_SESSION=${shQuote(session)}`);
  parts.push(`OFFHOST_AI=${aiOf(agent)}`);
  return `export ${parts.join(' ')}; ${rewrite}`;
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
