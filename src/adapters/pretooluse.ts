// The `PreToolUse` wire format shared by Claude Code and Codex (Codex's hook engine reads the same
// `hookSpecificOutput` fields). The agent-specific choices are passed in by claude-code.ts and codex.ts.
import type { Verdict } from '../types.js';
import { isAbsolute, resolve } from 'node:path';
import { powershellCandidates } from './powershell.js';
import {
  type AgentName,
  type AuditRecord,
  type Classify,
  type HookOptions,
  type HookReply,
  type RerouteMode,
  HOOK_RULES,
  denyReason,
  effectiveSettings,
  isRecord,
  joinArgv,
  json,
  jsonType,
  aJsonType,
  classifyPowerShell,
  commandInInput,
  parseEvent,
  rewriteReason,
  safeClassify,
  sessionTag,
  stringField,
  suggestReason,
  withSession,
} from './common.js';

export interface PreToolUseFlavour {
  agent: AgentName;
  /** tool_name values that are a shell command (case-sensitive, as the agent sends them). */
  shellTools: readonly string[];
  defaultMode: RerouteMode;
  /** The permissionDecision that goes with updatedInput in rewrite mode. */
  rewriteDecision(opts: HookOptions): 'ask' | 'allow';
  /** How broken input is refused (the event could not be trusted enough to answer in JSON, or can). */
  refuseInput(reason: string): HookReply;
  /** Accept `tool_input.command` as an argv array (joined for checking)? */
  argvCommand: boolean;
  /** tool_name values whose `command` is a PowerShell line (read by src/adapters/powershell.ts). */
  powershellTools?: readonly string[];
  /** tool_name prefix of MCP tools: judged when their input names a command (common.ts COMMAND_FIELDS). */
  mcpPrefix?: string;
  /** A `tool_input` field naming the directory the command runs in (Codex's `workdir`), relative to cwd. */
  workdirField?: string;
  /** True when nobody can answer an `ask` (headless or auto modes): reroutes are then answered in suggest form. */
  noOneToAsk?(ev: Record<string, unknown>, env: NodeJS.ProcessEnv): boolean;
}

/** What kind of line a tool call carries, or null when it is not judged. */
function lineKind(flavour: PreToolUseFlavour, toolName: string, input: unknown): 'bash' | 'powershell' | 'mcp' | null {
  // Claude's Monitor also has a WebSocket form with no command: it runs nothing here.
  if (toolName === 'Monitor' && isRecord(input) && input.command === undefined && typeof input.ws === 'string') return null;
  if (flavour.shellTools.includes(toolName)) return 'bash';
  if (flavour.powershellTools?.includes(toolName)) return 'powershell';
  if (flavour.mcpPrefix && toolName.startsWith(flavour.mcpPrefix) && commandInInput(input) !== null) return 'mcp';
  return null;
}

/** Does this event need the guard at all (false only for a well-formed event about a tool that runs nothing)? */
export function preToolUseNeedsGuard(flavour: PreToolUseFlavour, ev: unknown): boolean {
  if (!isRecord(ev) || typeof ev.tool_name !== 'string') return true;
  return lineKind(flavour, ev.tool_name, ev.tool_input) !== null;
}

/** Handles one PreToolUse event, given the raw stdin. `classifyAt(cwd)` gives the guard for that project. */
export function handlePreToolUse(
  flavour: PreToolUseFlavour,
  raw: string,
  classifyAt: (cwd: string) => Classify,
  opts: HookOptions,
): HookReply {
  const parsed = parseEvent(raw);
  if ('error' in parsed) return flavour.refuseInput(parsed.error);
  const ev = parsed.event;

  const eventName = stringField(ev, 'hook_event_name');
  if (typeof eventName !== 'string') return flavour.refuseInput(eventName.error);
  if (eventName !== 'PreToolUse') {
    return flavour.refuseInput(`unexpected hook event '${eventName}' (offhost hook ${flavour.agent} handles PreToolUse only)`);
  }
  const toolName = stringField(ev, 'tool_name');
  if (typeof toolName !== 'string') return flavour.refuseInput(toolName.error);
  // Another tool (Edit, Read, an MCP tool that names no command...): not ours to judge. No output: the agent
  // carries on as usual.
  const kind = lineKind(flavour, toolName, ev.tool_input);
  if (kind === null) return { stdout: '', stderr: '', exitCode: 0, audit: null };

  const cwd = stringField(ev, 'cwd');
  if (typeof cwd !== 'string') return flavour.refuseInput(cwd.error);
  if (!cwd.startsWith('/')) return flavour.refuseInput(`hook event field cwd is not an absolute path: ${JSON.stringify(cwd)}`);
  const sessionId = stringField(ev, 'session_id');
  if (typeof sessionId !== 'string') return flavour.refuseInput(sessionId.error);
  const input = ev.tool_input;
  if (!isRecord(input)) {
    return flavour.refuseInput(input === undefined ? 'hook event has no tool_input' : `hook event field tool_input is ${aJsonType(input)}, not an object`);
  }
  const cmd = input.command;
  let line: string;
  let argvForm = false;
  if (kind === 'mcp') line = commandInInput(input) as string;
  else if (typeof cmd === 'string') line = cmd;
  else if (flavour.argvCommand && Array.isArray(cmd) && cmd.length > 0 && cmd.every((w) => typeof w === 'string')) {
    line = joinArgv(cmd as string[]);
    argvForm = true;
  } else if (cmd === undefined || cmd === null) return flavour.refuseInput('hook event has no tool_input.command');
  else return flavour.refuseInput(`hook event field tool_input.command is ${aJsonType(cmd)}, not a string`);

  // The directory the command runs in: the tool's own workdir parameter where the event carries one.
  let dir = cwd;
  if (flavour.workdirField) {
    const w = input[flavour.workdirField];
    if (w !== undefined && w !== null && w !== '') {
      if (typeof w !== 'string') return flavour.refuseInput(`hook event field tool_input.${flavour.workdirField} is ${aJsonType(w)}, not a string`);
      dir = isAbsolute(w) ? w : resolve(cwd, w);
    }
  }

  const session = sessionTag(flavour.agent, sessionId, opts.env);
  const settings = effectiveSettings(opts, cwd, flavour.defaultMode);
  const { allowRewrite } = settings;
  let { mode } = settings;
  // Only a shell tool's command can be swapped; a PowerShell or MCP tool gets the command to run instead.
  if (kind !== 'bash') mode = 'suggest';
  // An `ask` nobody can answer (headless -p, auto modes) is denied silently: answer with the command instead.
  if (mode === 'rewrite' && flavour.rewriteDecision({ ...opts, allowRewrite }) === 'ask' && flavour.noOneToAsk?.(ev, opts.env)) mode = 'suggest';
  const base: AuditRecord = { agent: flavour.agent, session, cwd: dir, command: line, decision: 'deny', rule: null };

  let verdict: Verdict;
  try {
    const classify = classifyAt(cwd);
    verdict = kind === 'powershell' ? classifyPowerShell(classify, line, { cwd: dir, env: opts.env }, powershellCandidates) : safeClassify(classify, line, { cwd: dir, env: opts.env });
  } catch (err) {
    // loadGuard threw (a bad config file): refuse, and say which file.
    verdict = {
      decision: 'deny',
      rule: HOOK_RULES.internal,
      reason: `offhost could not load its configuration: ${err instanceof Error ? err.message : String(err)}`,
      route: null,
      rewrite: null,
      commands: [],
    };
  }

  if (verdict.decision === 'allow') {
    // No decision at all: the user's own permission rules still apply. Never answer `allow` here.
    return { stdout: '', stderr: '', exitCode: 0, audit: { ...base, decision: 'allow', rule: verdict.rule } };
  }
  if (verdict.decision === 'deny') {
    const reason = denyReason(verdict);
    return {
      stdout: json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }),
      stderr: '',
      exitCode: 0,
      audit: { ...base, decision: 'deny', rule: verdict.rule, reason: verdict.reason },
    };
  }
  // reroute
  const rewritten = withSession(verdict.rewrite as string, session, flavour.agent);
  const audit: AuditRecord = { ...base, decision: 'reroute', rule: verdict.rule, reason: verdict.reason, rewrite: rewritten, mode };
  if (mode === 'suggest') {
    return {
      stdout: json({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: suggestReason(verdict, rewritten) },
      }),
      stderr: '',
      exitCode: 0,
      audit,
    };
  }
  // updatedInput replaces the whole tool input: keep every field the agent sent, swap the command only.
  const updatedInput = { ...input, command: argvForm ? ['bash', '-c', rewritten] : rewritten };
  return {
    stdout: json({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: flavour.rewriteDecision({ ...opts, allowRewrite }),
        permissionDecisionReason: rewriteReason(verdict, rewritten),
        updatedInput,
      },
    }),
    stderr: '',
    exitCode: 0,
    audit,
  };
}

/** Refusal by exit status 2 with the reason on stderr (blocks the tool call in Claude Code and Gemini CLI). */
export function refuseByExit2(agent: AgentName, reason: string): HookReply {
  const text = `offhost refused this tool call: ${reason}`;
  return {
    stdout: '',
    stderr: `${text}\n`,
    exitCode: 2,
    audit: { agent, session: null, cwd: null, command: null, decision: 'deny', rule: HOOK_RULES.input, reason },
  };
}
