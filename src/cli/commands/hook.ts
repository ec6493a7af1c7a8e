// `offhost hook <agent> [--mode rewrite|suggest] [--allow-rewrite] [--role R] [--config F]`
// A pre-exec hook: the agent's event JSON on stdin, its protocol's answer on stdout (src/adapters/*).
// Fails closed: anything that goes wrong before an answer is written is a refusal in the agent's terms.
import type { Io } from '../../io.js';
import type { Role } from '../../types.js';
import { UsageError } from '../../errors.js';
import { formatDuration } from '../../report/duration.js';
import { didYouMean } from '../suggest.js';
import { type AgentName, type Classify, type HookOptions, type HookReply, type RerouteMode, AGENTS, errorText, hookDeadlines, isRecord } from '../../adapters/common.js';
import { claudeCode, handleClaudeCode } from '../../adapters/claude-code.js';
import { codex, handleCodex } from '../../adapters/codex.js';
import { geminiNeedsGuard, handleGemini } from '../../adapters/gemini.js';
import { preToolUseNeedsGuard, refuseByExit2 } from '../../adapters/pretooluse.js';
import { cursorNeedsGuard, handleCursor, refuseCursorInput } from '../../adapters/cursor.js';
import { copilotNeedsGuard, handleCopilot, refuseCopilotInput } from '../../adapters/copilot.js';
import { handleWindsurf, refuseWindsurfInput, windsurfNeedsGuard } from '../../adapters/windsurf.js';
import { handleOpenCode, openCodeNeedsGuard, refuseOpenCodeInput } from '../../adapters/opencode.js';
import { type AuditSettings, tryAppendAudit } from '../../adapters/audit-log.js';
import { type Classifier, INLINE_MAX, classifyOnly, makeClassifier } from '../../adapters/classifier.js';
import { type Trace, debugTrace, traceDecision, traceGuard, traceLine } from '../debug-trace.js';

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

// In the layout of every command's help (src/cli/help.ts), as a plain string: the hook is hot.
const USAGE = `Usage: offhost hook AGENT [--mode rewrite|suggest] [--allow-rewrite] [--role R] [--config FILE] [--debug]

A pre-exec hook: reads the agent's event JSON on stdin and answers in its protocol. AGENT is one of
${AGENTS.join(', ')}
(claude-code: PreToolUse, codex: PreToolUse, gemini: BeforeTool, cursor: beforeShellExecution, copilot:
preToolUse, windsurf: pre_run_command, opencode: offhost's plugin). Set it up with
\`offhost init --agent NAME\`; see hooks/README.md.

Options:
  --mode <mode>      rewrite: answer a reroute by rewriting the command to its offhost run form; suggest:
                     deny it with the command to run instead (default: $OFFHOST_HOOK_MODE, else the
                     agent's default)
  --allow-rewrite    claude-code: answer a rewrite with allow instead of ask (the user opted in)
  --role <role>      laptop, vm or ci (default: $OFFHOST_ROLE, else detected)
  --config <file>    configuration file (default: offhost.config.yaml found upwards, plus the user config)
  --debug            trace on stderr what offhost read and decided: the event, config files, role,
                     checkout, each rule matched (agents show a hook's stderr in their logs)
  -h, --help         show this help

Exit status: 0 answered (the decision is in the answer, in the agent's protocol); 2 blocked: the event could
not be read or judged (the reason on stderr), which every agent treats as a refusal.
Example: echo '{"tool_name":"Bash","tool_input":{"command":"make build-safe"}}' | offhost hook claude-code
`;

interface Parsed {
  help?: boolean;
  agent?: string;
  mode?: string;
  allowRewrite: boolean;
  role?: string;
  config?: string;
  classifyOnly: boolean;
  debug: boolean;
}

/**
 * Hand-parsed rather than with commander (the CLI's usual parser): this runs before every shell command an
 * agent issues, and loading commander costs about 5 ms of a start-up budget of a few ms.
 */
function parseArgs(args: string[]): Parsed {
  const p: Parsed = { allowRewrite: false, classifyOnly: false, debug: false };
  const value = (i: number, name: string): string => {
    const v = args[i + 1];
    if (v === undefined || v.startsWith('--')) throw new UsageError(`option '${name}' needs a value`);
    return v;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const name = eq > 0 ? a.slice(0, eq) : a;
    const inline = eq > 0 ? a.slice(eq + 1) : undefined;
    const take = (): string => inline ?? value(i++, name);
    switch (name) {
      case '--mode': {
        const m = take();
        if (m !== 'rewrite' && m !== 'suggest') throw new UsageError(`--mode must be rewrite or suggest (got '${m}')`);
        p.mode = m;
        break;
      }
      case '--allow-rewrite':
        p.allowRewrite = true;
        break;
      case '--role': {
        const r = take();
        if (!['laptop', 'vm', 'ci'].includes(r)) throw new UsageError(`--role must be laptop, vm or ci (got '${r}')`);
        p.role = r;
        break;
      }
      case '--config':
        p.config = take();
        break;
      case '--classify-only':
        p.classifyOnly = true;
        break;
      case '--debug':
        p.debug = true;
        break;
      case '-h':
      case '--help':
        p.help = true;
        break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown option '${a}'${didYouMean(a, ['--mode', '--allow-rewrite', '--role', '--config', '--debug', '--help'])}`);
        if (p.agent !== undefined) throw new UsageError(`unexpected argument '${a}'`);
        p.agent = a;
    }
  }
  return p;
}

function isAgent(s: string | undefined): s is AgentName {
  return s !== undefined && (AGENTS as readonly string[]).includes(s);
}

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

function resolveMode(p: Parsed, io: Io): RerouteMode | undefined {
  if (p.mode) return p.mode as RerouteMode;
  const env = io.env.OFFHOST_HOOK_MODE;
  if (env === undefined || env === '') return undefined;
  if (env === 'rewrite' || env === 'suggest') return env;
  io.stderr(`offhost hook: OFFHOST_HOOK_MODE=${JSON.stringify(env)} is not rewrite or suggest; using suggest\n`);
  return 'suggest';
}

export async function run(args: string[], io: Io): Promise<number> {
  const p = parseArgs(args);
  const role = p.role as Role | undefined;
  if (p.help) {
    io.stdout(USAGE);
    return 0;
  }

  if (p.classifyOnly) {
    io.stdout(await classifyOnly(await io.readStdin(), { env: io.env, role, configFile: p.config }));
    return 0;
  }
  if (!isAgent(p.agent)) {
    throw new UsageError(p.agent === undefined ? `which agent? offhost hook ${AGENTS.join('|')}` : `unknown agent '${p.agent}' (expected one of: ${AGENTS.join(', ')})`);
  }
  const agent = p.agent;
  const opts: HookOptions = {
    mode: resolveMode(p, io),
    // undefined (not false) when neither says so, so the project config can still decide
    allowRewrite: p.allowRewrite || io.env.OFFHOST_HOOK_ALLOW_REWRITE === '1' ? true : undefined,
    env: io.env,
    processCwd: io.cwd,
  };

  let reply: HookReply;
  const state: AnswerState = { classifier: null };
  try {
    reply = await answer(agent, opts, role, p.config, io, state, p.debug ? debugTrace(io) : null);
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
