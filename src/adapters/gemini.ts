// `offhost hook gemini`: a Gemini CLI `BeforeTool` command hook for `run_shell_command`.
//
// Protocol, from the Gemini CLI hooks reference (google-gemini/gemini-cli docs/hooks/reference.md,
// https://geminicli.com/docs/hooks/reference) and packages/core/src/hooks/types.ts:
// - stdin: `session_id`, `transcript_path`, `cwd`, `hook_event_name: "BeforeTool"`, `timestamp`,
//   `tool_name`, `tool_input` (the raw arguments), `mcp_context` for MCP tools. The shell tool is
//   `run_shell_command` with `command` and optional `description` and a directory relative to the project
//   root (`dir_path` in current releases, `directory` in older ones; docs/tools/shell.md).
// - exit 0: stdout is parsed as JSON (nothing else may be printed there). `decision: "deny"` (alias
//   "block") with `reason` stops the tool and sends the reason to the agent; the turn goes on.
//   `hookSpecificOutput.tool_input` "merges with and overrides" the model's arguments.
// - exit 2: "System Block", stderr is the reason; any other status is only a warning and the tool runs.
//   So broken input is refused with exit 2.
import type { Verdict } from '../types.js';
import {
  type AuditRecord,
  type Classify,
  type HookOptions,
  type HookReply,
  HOOK_RULES,
  denyReason,
  effectiveSettings,
  isRecord,
  json,
  jsonType,
  aJsonType,
  commandInInput,
  parseEvent,
  rewriteReason,
  safeClassify,
  sessionTag,
  stringField,
  suggestReason,
  withSession,
} from './common.js';
import { refuseByExit2 } from './pretooluse.js';
import { isAbsolute, resolve } from 'node:path';

export const GEMINI_SHELL_TOOLS = ['run_shell_command'] as const;

/** MCP tools are named `mcp__<server>__<tool>` (docs/hooks/reference.md); judged when their input names a command. */
export function geminiNeedsGuard(ev: unknown): boolean {
  if (!isRecord(ev) || typeof ev.tool_name !== 'string') return true;
  if ((GEMINI_SHELL_TOOLS as readonly string[]).includes(ev.tool_name)) return true;
  return ev.tool_name.startsWith('mcp__') && commandInInput(ev.tool_input) !== null;
}

const refuse = (reason: string): HookReply => refuseByExit2('gemini', reason);

export function handleGemini(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  const parsed = parseEvent(raw);
  if ('error' in parsed) return refuse(parsed.error);
  const ev = parsed.event;
  const eventName = stringField(ev, 'hook_event_name');
  if (typeof eventName !== 'string') return refuse(eventName.error);
  if (eventName !== 'BeforeTool') return refuse(`unexpected hook event '${eventName}' (offhost hook gemini handles BeforeTool only)`);
  const toolName = stringField(ev, 'tool_name');
  if (typeof toolName !== 'string') return refuse(toolName.error);
  // Other tools pass: an empty JSON object is "no decision" (the reference's own examples print `{}`).
  const mcp = toolName.startsWith('mcp__') && commandInInput(ev.tool_input) !== null;
  if (!mcp && !(GEMINI_SHELL_TOOLS as readonly string[]).includes(toolName)) return { stdout: json({}), stderr: '', exitCode: 0, audit: null };

  const cwd = stringField(ev, 'cwd');
  if (typeof cwd !== 'string') return refuse(cwd.error);
  if (!isAbsolute(cwd)) return refuse(`hook event field cwd is not an absolute path: ${JSON.stringify(cwd)}`);
  const sessionId = stringField(ev, 'session_id');
  if (typeof sessionId !== 'string') return refuse(sessionId.error);
  const input = ev.tool_input;
  if (!isRecord(input)) return refuse(input === undefined ? 'hook event has no tool_input' : `hook event field tool_input is ${aJsonType(input)}, not an object`);
  const field = mcp ? (commandInInput(input) as string) : stringField(input, 'command', 'tool_input.');
  if (typeof field !== 'string') return refuse(field.error);
  const line = field;
  let dir = cwd;
  for (const key of mcp ? [] : ['dir_path', 'directory']) {
    const d = input[key];
    if (d === undefined || d === null || d === '') continue;
    if (typeof d !== 'string') return refuse(`hook event field tool_input.${key} is ${aJsonType(d)}, not a string`);
    dir = resolve(cwd, d);
    break;
  }

  const session = sessionTag('gemini', sessionId, opts.env);
  // An MCP tool's command cannot be swapped: it gets the command to run instead.
  const mode = mcp ? 'suggest' : effectiveSettings(opts, cwd, 'rewrite').mode;
  const base: AuditRecord = { agent: 'gemini', session, cwd: dir, command: line, decision: 'deny', rule: null };
  let verdict: Verdict;
  try {
    verdict = safeClassify(classifyAt(cwd), line, { cwd: dir, env: opts.env });
  } catch (err) {
    verdict = {
      decision: 'deny',
      rule: HOOK_RULES.internal,
      reason: `offhost could not load its configuration: ${err instanceof Error ? err.message : String(err)}`,
      route: null,
      rewrite: null,
      commands: [],
    };
  }
  if (verdict.decision === 'allow') return { stdout: json({}), stderr: '', exitCode: 0, audit: { ...base, decision: 'allow', rule: verdict.rule } };
  if (verdict.decision === 'deny') {
    return {
      stdout: json({ decision: 'deny', reason: denyReason(verdict) }),
      stderr: '',
      exitCode: 0,
      audit: { ...base, decision: 'deny', rule: verdict.rule, reason: verdict.reason },
    };
  }
  const rewritten = withSession(verdict.rewrite as string, session, 'gemini');
  const audit: AuditRecord = { ...base, decision: 'reroute', rule: verdict.rule, reason: verdict.reason, rewrite: rewritten, mode };
  if (mode === 'suggest') {
    return { stdout: json({ decision: 'deny', reason: suggestReason(verdict, rewritten) }), stderr: '', exitCode: 0, audit };
  }
  return {
    stdout: json({
      systemMessage: rewriteReason(verdict, rewritten),
      hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { ...input, command: rewritten } },
    }),
    stderr: '',
    exitCode: 0,
    audit,
  };
}
