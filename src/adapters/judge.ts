// One command judged for an agent whose protocol is not PreToolUse (Cursor, Copilot, Windsurf, OpenCode):
// the verdict, the reroute command in the agent's session, and the audit record. Each adapter then writes
// the answer in its own terms.
import type { Verdict } from '../types.js';
import { type AgentName, type AuditRecord, type Classify, type HookOptions, HOOK_RULES, classifyPowerShell, errorText, safeClassify, sessionTag, withSession } from './common.js';
import { powershellCandidates } from './powershell.js';

export interface Judged {
  verdict: Verdict;
  /** The command to run instead (reroute only), with the session exported. */
  rewritten: string | null;
  audit: AuditRecord;
}

export function judge(
  agent: AgentName,
  line: string,
  where: { cwd: string; dir?: string; sessionId: string | null; powershell?: boolean },
  classifyAt: (cwd: string) => Classify,
  opts: HookOptions,
): Judged {
  const dir = where.dir ?? where.cwd;
  const session = sessionTag(agent, where.sessionId, opts.env);
  let verdict: Verdict;
  try {
    const classify = classifyAt(where.cwd);
    verdict = where.powershell ? classifyPowerShell(classify, line, { cwd: dir, env: opts.env }, powershellCandidates) : safeClassify(classify, line, { cwd: dir, env: opts.env });
  } catch (err) {
    verdict = { decision: 'deny', rule: HOOK_RULES.internal, reason: `offhost could not load its configuration: ${errorText(err)}`, route: null, rewrite: null, commands: [] };
  }
  const base: AuditRecord = { agent, session, cwd: dir, command: line, decision: verdict.decision, rule: verdict.rule };
  if (verdict.decision === 'allow') return { verdict, rewritten: null, audit: base };
  if (verdict.decision === 'deny') return { verdict, rewritten: null, audit: { ...base, reason: verdict.reason } };
  const rewritten = withSession(verdict.rewrite as string, session, agent);
  return { verdict, rewritten, audit: { ...base, reason: verdict.reason, rewrite: rewritten } };
}
