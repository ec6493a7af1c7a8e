// `offhost hook cursor`: a Cursor `beforeShellExecution` (and `beforeMCPExecution`) command hook,
// `.cursor/hooks.json` (version 1).
//
// Protocol (Cursor docs, https://cursor.com/docs/agent/hooks; field by field in the Cupcake Cursor
// reference, https://cupcake.eqtylab.io/reference/harnesses/cursor):
// - stdin: `hook_event_name`, `conversation_id`, `generation_id`, `workspace_roots`, and for
//   beforeShellExecution `command` and `cwd`; for beforeMCPExecution `tool_name`, `tool_input` (an object,
//   or its JSON text in some releases), and the server's `command`/`url`.
// - stdout: `{"permission": "allow"|"deny"|"ask", "user_message", "agent_message"}`. The hook cannot change
//   the command, so a reroute is a deny whose agent_message carries the exact command to run instead.
// - exit 2 blocks like a deny; other failures let the command run unless the entry has `failClosed: true`
//   (then a crash, a timeout or bad JSON blocks; init writes it), so broken input is exit 2 (with a deny on
//   stdout as well). hooks/README.md "Cursor" lists the sources.
// Cursor documents no "no opinion" answer: an allowed command is answered `permission: "allow"`.
import type { Classify, HookOptions, HookReply } from './common.js';
import { HOOK_RULES, aJsonType, commandInInput, denyReason, isRecord, json, parseEvent, suggestReason } from './common.js';
import { judge } from './judge.js';
import { isAbsolute } from 'node:path';

const EVENTS = ['beforeShellExecution', 'beforeMCPExecution'];

export function refuseCursorInput(reason: string): HookReply {
  const text = `offhost refused this command: ${reason}`;
  return {
    stdout: json({ permission: 'deny', user_message: text, agent_message: text }),
    stderr: `${text}\n`,
    exitCode: 2,
    audit: { agent: 'cursor', session: null, cwd: null, command: null, decision: 'deny', rule: HOOK_RULES.input, reason },
  };
}

function mcpInput(ev: Record<string, unknown>): unknown {
  const t = ev.tool_input;
  if (typeof t !== 'string') return t;
  try {
    return JSON.parse(t);
  } catch {
    return { command: t };
  }
}

export function cursorNeedsGuard(ev: unknown): boolean {
  if (!isRecord(ev)) return true;
  if (ev.hook_event_name === 'beforeMCPExecution') return commandInInput(mcpInput(ev)) !== null;
  return true;
}

export function handleCursor(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  const parsed = parseEvent(raw);
  if ('error' in parsed) return refuseCursorInput(parsed.error);
  const ev = parsed.event;
  const name = ev.hook_event_name;
  if (typeof name !== 'string' || !EVENTS.includes(name)) {
    return refuseCursorInput(`unexpected hook event ${JSON.stringify(name ?? null)} (offhost hook cursor handles ${EVENTS.join(', ')})`);
  }
  let line: string;
  if (name === 'beforeMCPExecution') {
    const c = commandInInput(mcpInput(ev));
    if (c === null) return { stdout: json({ permission: 'allow' }), stderr: '', exitCode: 0, audit: null };
    line = c;
  } else {
    if (typeof ev.command !== 'string') return refuseCursorInput(ev.command === undefined ? 'hook event has no command' : `hook event field command is ${aJsonType(ev.command)}, not a string`);
    line = ev.command;
  }
  const roots = Array.isArray(ev.workspace_roots) ? ev.workspace_roots.filter((r): r is string => typeof r === 'string') : [];
  const cwd = typeof ev.cwd === 'string' && ev.cwd !== '' ? ev.cwd : (roots[0] ?? (name === 'beforeMCPExecution' ? opts.processCwd : undefined));
  if (cwd === undefined || !isAbsolute(cwd)) return refuseCursorInput(`hook event has no absolute cwd or workspace_roots (${JSON.stringify(ev.cwd ?? null)})`);
  const sessionId = typeof ev.conversation_id === 'string' ? ev.conversation_id : null;
  const j = judge('cursor', line, { cwd, sessionId }, classifyAt, opts);
  if (j.verdict.decision === 'allow') return { stdout: json({ permission: 'allow' }), stderr: '', exitCode: 0, audit: j.audit };
  const reason = j.rewritten ? suggestReason(j.verdict, j.rewritten) : denyReason(j.verdict);
  return { stdout: json({ permission: 'deny', user_message: reason, agent_message: reason }), stderr: '', exitCode: 0, audit: { ...j.audit, ...(j.rewritten ? { mode: 'suggest' as const } : {}) } };
}
