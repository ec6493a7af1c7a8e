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
//
// The batch tool runs nested calls itself, without the plugin hook seeing them (packages/opencode/src/tool/
// batch.ts: `{"tool_calls":[{"tool","parameters"}]}`, each `tool.execute(parameters)` called directly, up to
// 25, `batch` itself disallowed inside). So offhost reads every nested call as if it came alone: the batch is
// allowed when all are, and refused as a whole otherwise. A nested reroute is refused with the exact command
// to call on its own (the plugin rewrites `args.command` only, and a batch has none); a nested call offhost
// cannot read (no tool name, a bash call without a command string, nesting past MAX_NESTING) refuses the batch.
import type { Classify, HookOptions, HookReply } from './common.js';
import { HOOK_RULES, commandInInput, denyReason, effectiveSettings, isRecord, json, parseEvent, rewriteReason, suggestReason } from './common.js';
import { judge } from './judge.js';
import { isAbsolute, resolve } from 'node:path';

const SHELL_TOOLS = new Set(['bash', 'shell']);
/** Tools whose arguments carry nested tool calls (`tool_calls: [{tool, parameters}]`). */
const BATCH_TOOLS = new Set(['batch']);
/** OpenCode refuses a batch inside a batch; offhost reads a few levels anyway, and refuses deeper. */
const MAX_NESTING = 4;

/** One call to judge: the tool, its command (or null: nothing runs), where it runs, and its place in the batch. */
interface Call {
  tool: string;
  line: string | null;
  workdir: string | null;
  at: string;
}

/** The calls `tool`/`args` stands for: itself, or each nested call of a batch (recursively); a string is the reason it cannot be read. */
function callsOf(tool: string, args: Record<string, unknown>, at: string, depth: number): Call[] | string {
  if (BATCH_TOOLS.has(tool) || (Array.isArray(args.tool_calls) && !SHELL_TOOLS.has(tool))) {
    if (depth >= MAX_NESTING) return `${at}: tool calls nested more than ${MAX_NESTING} deep`;
    const list = args.tool_calls;
    if (!Array.isArray(list)) return `${at}: the ${tool} tool call has no tool_calls array`;
    const out: Call[] = [];
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      const here = `${at} > tool_calls[${i}]`;
      if (!isRecord(c) || typeof c.tool !== 'string') return `${here}: a nested call without a tool name`;
      const params = c.parameters === undefined ? {} : c.parameters;
      if (!isRecord(params)) return `${here} (${c.tool}): its parameters are not an object`;
      const inner = callsOf(c.tool, params, `${here} (${c.tool})`, depth + 1);
      if (typeof inner === 'string') return inner;
      out.push(...inner);
    }
    return out;
  }
  if (SHELL_TOOLS.has(tool)) {
    if (typeof args.command !== 'string') return `${at}: the ${tool} tool call has no command string`;
    return [{ tool, line: args.command, workdir: typeof args.workdir === 'string' && args.workdir !== '' ? args.workdir : null, at }];
  }
  return [{ tool, line: commandInInput(args), workdir: null, at }];
}

export function refuseOpenCodeInput(reason: string): HookReply {
  const text = `offhost refused this tool call: ${reason}`;
  return { stdout: json({ decision: 'deny', reason: text }), stderr: '', exitCode: 0, audit: { agent: 'opencode', session: null, cwd: null, command: null, decision: 'deny', rule: HOOK_RULES.input, reason } };
}

export function openCodeNeedsGuard(ev: unknown): boolean {
  if (!isRecord(ev) || typeof ev.tool !== 'string') return true;
  if (BATCH_TOOLS.has(ev.tool) || (isRecord(ev.args) && ev.args.tool_calls !== undefined)) return true;
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
  const calls = callsOf(ev.tool, args, ev.tool, 0);
  if (typeof calls === 'string') return refuseOpenCodeInput(calls);
  const judged = calls.filter((c) => c.line !== null);
  if (judged.length === 0) return { stdout: json({ decision: 'allow' }), stderr: '', exitCode: 0, audit: null };
  const cwd = ev.cwd;
  if (typeof cwd !== 'string' || !isAbsolute(cwd)) return refuseOpenCodeInput(`hook event has no absolute cwd (${JSON.stringify(cwd ?? null)})`);
  const sessionId = typeof ev.sessionID === 'string' ? ev.sessionID : null;
  const nested = judged.length !== 1 || judged[0]?.at !== ev.tool;
  let lastAudit: HookReply['audit'] = null;
  for (const call of judged) {
    const dir = call.workdir !== null ? resolve(cwd, call.workdir) : cwd;
    const j = judge('opencode', call.line as string, { cwd, dir, sessionId }, classifyAt, opts);
    lastAudit = j.audit;
    if (j.verdict.decision === 'allow') continue;
    const where = nested ? `in the ${ev.tool} call, ${call.at}: ` : '';
    if (!j.rewritten) return { stdout: json({ decision: 'deny', reason: `${where}${denyReason(j.verdict)}` }), stderr: '', exitCode: 0, audit: j.audit };
    const { mode } = effectiveSettings(opts, cwd, 'rewrite');
    if (mode === 'suggest' || nested || !SHELL_TOOLS.has(call.tool)) {
      const alone = nested ? ' (as a bash call of its own, not inside a batch)' : '';
      return { stdout: json({ decision: 'deny', reason: `${where}${suggestReason(j.verdict, j.rewritten)}${alone}` }), stderr: '', exitCode: 0, audit: { ...j.audit, mode: 'suggest' } };
    }
    return { stdout: json({ decision: 'rewrite', command: j.rewritten, reason: rewriteReason(j.verdict, j.rewritten) }), stderr: '', exitCode: 0, audit: { ...j.audit, mode: 'rewrite' } };
  }
  return { stdout: json({ decision: 'allow' }), stderr: '', exitCode: 0, audit: lastAudit };
}
