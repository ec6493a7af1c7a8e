// An agent's pre-exec hook, from its event on stdin to its protocol's answer (`offhost hook AGENT`): the
// event read within the agent's deadline, the guard loaded only for an event that runs a command, each
// agent's handler, a refusal in the agent's own terms for anything that goes wrong, and the audit line.
import type { Io } from '../io.js';
import type { Role } from '../types.js';
import { formatDuration } from '../report/duration.js';
import { type AgentName, type Classify, type HookOptions, type HookReply, type RerouteMode, AGENTS, errorText, hookDeadlines } from './common.js';
import { claudeCode, handleClaudeCode } from './claude-code.js';
import { codex, handleCodex } from './codex.js';
import { geminiNeedsGuard, handleGemini } from './gemini.js';
import { preToolUseNeedsGuard, refuseByExit2 } from './pretooluse.js';
import { cursorNeedsGuard, handleCursor, refuseCursorInput } from './cursor.js';
import { copilotNeedsGuard, handleCopilot, refuseCopilotInput } from './copilot.js';
import { handleWindsurf, refuseWindsurfInput, windsurfNeedsGuard } from './windsurf.js';
import { handleOpenCode, openCodeNeedsGuard, refuseOpenCodeInput } from './opencode.js';
import { type AuditSettings, tryAppendAudit } from './audit-log.js';
import { type Classifier, INLINE_MAX, makeClassifier } from './classifier.js';
import { type Trace, debugTrace, traceDecision, traceGuard, traceLine } from '../report/debug-trace.js';

export function isAgent(s: string | undefined): s is AgentName {
  return s !== undefined && (AGENTS as readonly string[]).includes(s);
}

/** What the command line said (each unset when it did not). */
export interface HookRunOptions {
  mode?: RerouteMode;
  allowRewrite?: boolean;
  role?: Role;
  configFile?: string;
  debug?: boolean;
}

/** --mode, else OFFHOST_HOOK_MODE (a bad value is said and read as suggest, the safer answer), else the agent's default. */
function resolveMode(flag: RerouteMode | undefined, io: Io): RerouteMode | undefined {
  if (flag) return flag;
  const env = io.env.OFFHOST_HOOK_MODE;
  if (env === undefined || env === '') return undefined;
  if (env === 'rewrite' || env === 'suggest') return env;
  io.stderr(`offhost hook: OFFHOST_HOOK_MODE=${JSON.stringify(env)} is not rewrite or suggest; using suggest\n`);
  return 'suggest';
}

/** Answers one event for `agent`; returns the exit status the agent reads. */
export async function runHook(agent: AgentName, o: HookRunOptions, io: Io): Promise<number> {
  const opts: HookOptions = {
    mode: resolveMode(o.mode, io),
    // undefined (not false) when neither says so, so the project config can still decide
    allowRewrite: o.allowRewrite || io.env.OFFHOST_HOOK_ALLOW_REWRITE === '1' ? true : undefined,
    env: io.env,
    processCwd: io.cwd,
  };
  let reply: HookReply;
  const state: AnswerState = { classifier: null };
  try {
    reply = await answer(agent, opts, o.role, o.configFile, io, state, o.debug ? debugTrace(io) : null);
  } catch (err) {
    // A bug must not turn into a silent pass: refuse in the agent's own terms.
    reply = REFUSE_INPUT[agent](`offhost failed: ${errorText(err)}`);
    reply = { ...reply, audit: reply.audit && { ...reply.audit, rule: 'internal-error' } };
  }
  if (reply.audit) tryAppendAudit(reply.audit, io.env, io.stderr, io.clock.now(), auditSettings(state, reply.audit.cwd));
  if (reply.stdout) io.stdout(reply.stdout);
  if (reply.stderr) io.stderr(reply.stderr);
  return reply.exitCode;
}

const HANDLERS: Record<AgentName, (raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions) => HookReply> = {
  'claude-code': handleClaudeCode,
  codex: handleCodex,
  gemini: handleGemini,
  cursor: handleCursor,
  copilot: handleCopilot,
  windsurf: handleWindsurf,
  opencode: handleOpenCode,
};

/** Broken input, answered the way each agent blocks for sure (see the adapters' notes). */
const REFUSE_INPUT: Record<AgentName, (reason: string) => HookReply> = {
  'claude-code': (r) => claudeCode.refuseInput(r),
  codex: (r) => codex.refuseInput(r),
  gemini: (r) => refuseByExit2('gemini', r),
  cursor: refuseCursorInput,
  copilot: refuseCopilotInput,
  windsurf: refuseWindsurfInput,
  opencode: refuseOpenCodeInput,
};

/** Hook input larger than this is refused unread past it (a 1 MiB command plus its JSON envelope fits). */
const STDIN_MAX = 8 * 1024 * 1024;

const PENDING = Symbol('pending');

/** An agent that never closes stdin gets a refusal after `ms` instead of a hook that hangs until the agent gives up. */
async function readStdinBounded(io: Io, ms: number): Promise<{ text: string } | { error: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const reading = io.readStdin();
    // Usually the agent has written the event and closed stdin before the hook reads it, and the reader
    // has it all at once (`now`): then no deadline timer is set up (the first timer costs a quarter
    // millisecond), nor a race to learn it (another tenth).
    const now = reading.now ?? (await Promise.race([reading, Promise.resolve(PENDING)]));
    let r: { text: string } | { error: string };
    if (now !== PENDING) {
      r = { text: now };
    } else {
      const deadline = new Promise<{ error: string }>((res) => {
        timer = setTimeout(() => res({ error: `the hook input did not end within ${formatDuration(ms)} (truncated or stalled input)` }), ms);
        timer.unref();
      });
      r = await Promise.race([reading.then((text) => ({ text })), deadline]);
    }
    if ('text' in r && r.text.length > STDIN_MAX) return { error: `hook input is ${r.text.length} bytes, more than ${STDIN_MAX}` };
    if ('error' in r) {
      // The real stdin is still open; stop reading it so the process can end.
      io.cancelStdin?.();
    }
    return r;
  } catch (err) {
    return { error: `could not read the hook input: ${errorText(err)}` };
  } finally {
    clearTimeout(timer);
  }
}

const NEEDS_GUARD: Record<AgentName, (ev: unknown) => boolean> = {
  'claude-code': (ev) => preToolUseNeedsGuard(claudeCode, ev),
  codex: (ev) => preToolUseNeedsGuard(codex, ev),
  gemini: geminiNeedsGuard,
  cursor: cursorNeedsGuard,
  copilot: copilotNeedsGuard,
  windsurf: windsurfNeedsGuard,
  opencode: openCodeNeedsGuard,
};

/** False only for a well-formed event about a tool that runs no command: the guard is not needed for that. */
function needsGuard(agent: AgentName, raw: string): boolean {
  try {
    return NEEDS_GUARD[agent](JSON.parse(raw));
  } catch {
    return true;
  }
}

interface AnswerState {
  classifier: Classifier | null;
}

/** The project config's `audit:` section for the event's directory, when the guard was loaded. */
function auditSettings(state: AnswerState, cwd: string | null): AuditSettings {
  if (!state.classifier || !cwd) return {};
  try {
    return state.classifier.configAt(cwd).audit;
  } catch {
    return {};
  }
}

async function answer(agent: AgentName, opts: HookOptions, role: Role | undefined, configFile: string | undefined, io: Io, state: AnswerState, trace: Trace | null): Promise<HookReply> {
  const handler = HANDLERS[agent];
  // Both deadlines end before the timeout `offhost init` writes for this agent (it would run the tool).
  const deadlines = hookDeadlines(agent, io.env);
  if (deadlines.capped.length > 0) io.stderr(`offhost hook: ${deadlines.capped.join(', ')}: the agent stops the hook at its own timeout\n`);
  const input = await readStdinBounded(io, deadlines.stdinMs);
  if (trace) trace('error' in input ? `event: not read: ${input.error}` : `event (${agent}, ${input.text.length} characters on stdin): ${input.text.length > 300 ? `${input.text.slice(0, 297)}...` : input.text}`);
  let reply: HookReply;
  if ('error' in input) {
    reply = REFUSE_INPUT[agent](input.error);
  } else {
    let classifier: Classifier | null = null;
    let loadError: unknown = null;
    // Other tools (Read, Edit, MCP...) pass without loading the guard at all.
    if (needsGuard(agent, input.text)) {
      try {
        classifier = await makeClassifier({ env: io.env, role, configFile, budgetMs: deadlines.budgetMs });
      } catch (err) {
        loadError = err;
      }
    }
    if (trace && !classifier) trace(loadError ? `the guard could not be loaded: ${errorText(loadError)}` : 'the event runs no command: the guard is not loaded');
    const classifyAt = (cwd: string): Classify => {
      if (!classifier) throw loadError instanceof Error ? loadError : new Error(String(loadError ?? 'guard not loaded'));
      const classify = classifier.classifyAt(cwd);
      return trace ? tracedClassify(trace, classifier, cwd, classify, { env: io.env, role }) : classify;
    };
    state.classifier = classifier;
    const c = classifier;
    const settingsAt = c ? (cwd: string) => c.configAt(cwd).hook : undefined;
    reply = handler(input.text, classifyAt, { ...opts, settingsAt });
  }
  return reply;
}

/** classify, with the configuration it used and its decision traced (`--debug`). */
function tracedClassify(trace: Trace, classifier: Classifier, projectCwd: string, classify: Classify, o: { env: NodeJS.ProcessEnv; role?: Role }): Classify {
  const guard = classifier.guardAt?.(projectCwd);
  if (guard) traceGuard(trace, guard, { cwd: projectCwd, env: o.env, role: o.role });
  return (line, at) => {
    traceLine(trace, line, `the event${at?.cwd && at.cwd !== projectCwd ? `, run in ${at.cwd}` : ''}`);
    const verdict = classify(line, at);
    // The per-command detail: explained again, only when tracing (the verdict given is the one above).
    traceDecision(trace, guard && line.length <= INLINE_MAX ? guard.explain(line, at).decision : null, verdict);
    return verdict;
  };
}

