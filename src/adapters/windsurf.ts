// `offhost hook windsurf`: a Windsurf (Cascade) `pre_run_command` (and `pre_mcp_tool_use`) hook,
// `.windsurf/hooks.json`.
//
// Protocol (Windsurf docs "Cascade Hooks", https://docs.windsurf.com/windsurf/cascade/hooks):
// - stdin: `agent_action_name` (the event), `trajectory_id`, `execution_id`, `timestamp`, `tool_info`:
//   for pre_run_command `command_line` and `cwd`; for pre_mcp_tool_use `mcp_server_name`, `mcp_tool_name`,
//   `mcp_tool_arguments`.
// - exit 2 blocks the action (pre-hooks only) and what the hook printed is shown (`show_output: true`);
//   exit 0 lets it run. The hook cannot change the command: a reroute is a block whose message carries the
//   exact command to run instead. Broken input is exit 2.
import type { Classify, HookOptions, HookReply } from './common.js';
import { HOOK_RULES, aJsonType, commandInInput, denyReason, isRecord, parseEvent, suggestReason } from './common.js';
import { judge } from './judge.js';
import { isAbsolute } from 'node:path';

const EVENTS = ['pre_run_command', 'pre_mcp_tool_use'];

export function refuseWindsurfInput(reason: string): HookReply {
  const text = `offhost refused this command: ${reason}`;
  return { stdout: '', stderr: `${text}\n`, exitCode: 2, audit: { agent: 'windsurf', session: null, cwd: null, command: null, decision: 'deny', rule: HOOK_RULES.input, reason } };
}

export function windsurfNeedsGuard(ev: unknown): boolean {
  if (!isRecord(ev)) return true;
  if (ev.agent_action_name === 'pre_mcp_tool_use') return !isRecord(ev.tool_info) || commandInInput(ev.tool_info.mcp_tool_arguments) !== null;
  return true;
}

export function handleWindsurf(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  const parsed = parseEvent(raw);
  if ('error' in parsed) return refuseWindsurfInput(parsed.error);
  const ev = parsed.event;
  const name = ev.agent_action_name;
  if (typeof name !== 'string' || !EVENTS.includes(name)) {
    return refuseWindsurfInput(`unexpected hook event ${JSON.stringify(name ?? null)} (offhost hook windsurf handles ${EVENTS.join(', ')})`);
  }
  const info = ev.tool_info;
  if (!isRecord(info)) return refuseWindsurfInput(info === undefined ? 'hook event has no tool_info' : `hook event field tool_info is ${aJsonType(info)}, not an object`);
  let line: string;
  if (name === 'pre_mcp_tool_use') {
    const c = commandInInput(info.mcp_tool_arguments);
    if (c === null) return { stdout: '', stderr: '', exitCode: 0, audit: null };
    line = c;
  } else {
    if (typeof info.command_line !== 'string') return refuseWindsurfInput(info.command_line === undefined ? 'hook event has no tool_info.command_line' : `hook event field tool_info.command_line is ${aJsonType(info.command_line)}, not a string`);
    line = info.command_line;
  }
  // MCP events carry no directory: the hook's own (Windsurf starts workspace hooks in the workspace).
  const cwd = name === 'pre_mcp_tool_use' && info.cwd === undefined ? opts.processCwd : info.cwd;
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) return refuseWindsurfInput(`hook event has no absolute tool_info.cwd (${JSON.stringify(cwd ?? null)})`);
  const sessionId = typeof ev.trajectory_id === 'string' ? ev.trajectory_id : null;
  const j = judge('windsurf', line, { cwd, sessionId }, classifyAt, opts);
  if (j.verdict.decision === 'allow') return { stdout: '', stderr: '', exitCode: 0, audit: j.audit };
  const reason = j.rewritten ? suggestReason(j.verdict, j.rewritten) : denyReason(j.verdict);
  return { stdout: '', stderr: `${reason}\n`, exitCode: 2, audit: { ...j.audit, ...(j.rewritten ? { mode: 'suggest' as const } : {}) } };
}
