// `offhost hook opencode`: the judge behind offhost's OpenCode plugin (hooks/opencode-plugin.js, written by
// `offhost init --agent opencode` to `.opencode/plugins/offhost.js`).
//
// OpenCode has no command hooks: plugins are JS/TS modules whose `tool.execute.before(input, output)`
// runs before every tool (OpenCode docs "Plugins", https://opencode.ai/docs/plugins/): `input.tool` is the
// tool id (`bash` runs a shell command), `output.args` its arguments (`command`, `timeout`, `workdir`,
// `description` for bash); throwing an Error blocks the call and its message goes to the model, assigning
// `output.args.command` changes what runs. The plugin hands this hook
// `{"event":"tool.execute.before","tool","sessionID","callID","args","cwd"}` on stdin and reads back one of
//   {"decision":"allow"} | {"decision":"deny","reason"} | {"decision":"rewrite","command","reason"}
// and fails closed on anything else (no answer, a bad status, an unreadable answer: it throws).
import type { Classify, HookOptions, HookReply } from './common.js';
import { HOOK_RULES, commandInInput, denyReason, effectiveSettings, isRecord, json, parseEvent, rewriteReason, suggestReason } from './common.js';
import { judge } from './judge.js';
import { isAbsolute, resolve } from 'node:path';

const SHELL_TOOLS = new Set(['bash', 'shell']);

export function refuseOpenCodeInput(reason: string): HookReply {
  const text = `offhost refused this tool call: ${reason}`;
  return { stdout: json({ decision: 'deny', reason: text }), stderr: '', exitCode: 0, audit: { agent: 'opencode', session: null, cwd: null, command: null, decision: 'deny', rule: HOOK_RULES.input, reason } };
}

export function openCodeNeedsGuard(ev: unknown): boolean {
  if (!isRecord(ev) || typeof ev.tool !== 'string') return true;
  return SHELL_TOOLS.has(ev.tool) || commandInInput(ev.args) !== null;
}

export function handleOpenCode(raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions): HookReply {
  const parsed = parseEvent(raw);
  if ('error' in parsed) return refuseOpenCodeInput(parsed.error);
  const ev = parsed.event;
  if (ev.event !== 'tool.execute.before') return refuseOpenCodeInput(`unexpected hook event ${JSON.stringify(ev.event ?? null)} (offhost hook opencode handles tool.execute.before)`);
  if (typeof ev.tool !== 'string') return refuseOpenCodeInput('hook event has no tool');
  const args = ev.args;
  if (!isRecord(args)) return refuseOpenCodeInput('hook event has no args object');
  const shell = SHELL_TOOLS.has(ev.tool);
  const given = args.command;
  const line = shell ? (typeof given === 'string' ? given : null) : commandInInput(args);
  if (line === null) {
    if (shell) return refuseOpenCodeInput(`the ${ev.tool} tool call has no command string`);
    return { stdout: json({ decision: 'allow' }), stderr: '', exitCode: 0, audit: null };
  }
  const cwd = ev.cwd;
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) return refuseOpenCodeInput(`hook event has no absolute cwd (${JSON.stringify(cwd ?? null)})`);
  const workdir = args.workdir;
  const dir = shell && typeof workdir === 'string' && workdir !== '' ? resolve(cwd, workdir) : cwd;
  const sessionId = typeof ev.sessionID === 'string' ? ev.sessionID : null;
  const j = judge('opencode', line, { cwd, dir, sessionId }, classifyAt, opts);
  if (j.verdict.decision === 'allow') return { stdout: json({ decision: 'allow' }), stderr: '', exitCode: 0, audit: j.audit };
  if (!j.rewritten) return { stdout: json({ decision: 'deny', reason: denyReason(j.verdict) }), stderr: '', exitCode: 0, audit: j.audit };
  const { mode } = effectiveSettings(opts, cwd, 'rewrite');
  if (mode === 'suggest' || !shell) {
    return { stdout: json({ decision: 'deny', reason: suggestReason(j.verdict, j.rewritten) }), stderr: '', exitCode: 0, audit: { ...j.audit, mode: 'suggest' } };
  }
  return { stdout: json({ decision: 'rewrite', command: j.rewritten, reason: rewriteReason(j.verdict, j.rewritten) }), stderr: '', exitCode: 0, audit: { ...j.audit, mode: 'rewrite' } };
}
