// `offhost hook copilot`: a GitHub Copilot CLI / Copilot coding agent `preToolUse` command hook,
// `.github/hooks/*.json` (version 1; the coding agent reads them from the default branch).
//
// Protocol (GitHub Docs "Hooks configuration", https://docs.github.com/en/copilot/reference/hooks-configuration,
// and "Using hooks with GitHub Copilot agents"):
// - stdin: `timestamp` (ms), `cwd`, `toolName`, `toolArgs` (the tool's arguments as a JSON string; the SDK
//   hands an object, accepted too). The shell tools are `bash` and, on Windows, `powershell`, with
//   `command` in their arguments.
// - stdout: `{"permissionDecision": "deny", "permissionDecisionReason": …}` blocks the call. Only deny is
//   acted on; rewritten arguments are ignored, so a reroute is a deny carrying the exact command to run.
// - Nothing on stdout: the tool runs. A failing hook is not documented to block, so broken input is
//   refused with a deny on stdout (exit 0) and the reason on stderr.
import type { Classify, HookOptions, HookReply } from './common.js';
import { HOOK_RULES, commandInInput, denyReason, isRecord, json, parseEvent, suggestReason } from './common.js';
import { judge } from './judge.js';
import { isAbsolute } from 'node:path';

const SHELLS = new Set(['bash', 'shell', 'sh', 'zsh']);
const POWERSHELLS = new Set(['powershell', 'pwsh']);

export function refuseCopilotInput(reason: string): HookReply {
  const text = `offhost refused this tool call: ${reason}`;
  return {
    stdout: json({ permissionDecision: 'deny', permissionDecisionReason: text }),
    stderr: `${text}\n`,
    exitCode: 0,
    audit: { agent: 'copilot', session: null, cwd: null, command: null, decision: 'deny', rule: HOOK_RULES.input, reason },
  };
}

function toolArgs(ev: Record<string, unknown>): { args: Record<string, unknown> } | { error: string } {
  let a = ev.toolArgs;
  if (typeof a === 'string') {
    try {
      a = JSON.parse(a);
    } catch {
      return { error: 'hook event field toolArgs is not valid JSON' };
    }
  }
  if (!isRecord(a)) return { error: a === undefined ? 'hook event has no toolArgs' : 'hook event field toolArgs is not an object' };
  return { args: a };
}

export function copilotNeedsGuard(ev: unknown): boolean {
  if (!isRecord(ev) || typeof ev.toolName !== 'string') return true;
  const name = ev.toolName.toLowerCase();
  if (SHELLS.has(name) || POWERSHELLS.has(name)) return true;
  const a = toolArgs(ev);
  return 'error' in a || commandInInput(a.args) !== null;
}

export function handleCopilot(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  const parsed = parseEvent(raw);
  if ('error' in parsed) return refuseCopilotInput(parsed.error);
  const ev = parsed.event;
  if (typeof ev.toolName !== 'string') return refuseCopilotInput('hook event has no toolName (offhost hook copilot handles preToolUse)');
  const name = ev.toolName.toLowerCase();
  const got = toolArgs(ev);
  if ('error' in got) return refuseCopilotInput(got.error);
  const args = got.args;
  const shell = SHELLS.has(name);
  const powershell = POWERSHELLS.has(name);
  const given = args.command;
  const line = shell || powershell ? (typeof given === 'string' ? given : null) : commandInInput(args);
  if (line === null) {
    if (shell || powershell) return refuseCopilotInput(`hook event toolArgs of ${ev.toolName} has no command string`);
    return { stdout: '', stderr: '', exitCode: 0, audit: null };
  }
  const cwd = ev.cwd;
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) return refuseCopilotInput(`hook event has no absolute cwd (${JSON.stringify(cwd ?? null)})`);
  const sessionId = typeof ev.sessionId === 'string' ? ev.sessionId : null;
  const j = judge('copilot', line, { cwd, sessionId, powershell }, classifyAt, opts);
  if (j.verdict.decision === 'allow') return { stdout: '', stderr: '', exitCode: 0, audit: j.audit };
  const reason = j.rewritten ? suggestReason(j.verdict, j.rewritten) : denyReason(j.verdict);
  return { stdout: json({ permissionDecision: 'deny', permissionDecisionReason: reason }), stderr: '', exitCode: 0, audit: { ...j.audit, ...(j.rewritten ? { mode: 'suggest' as const } : {}) } };
}
