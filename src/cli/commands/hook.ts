// `offhost hook claude-code|codex|gemini [--mode rewrite|suggest] [--allow-rewrite] [--role R] [--config F]`
// A pre-exec hook: the agent's event JSON on stdin, its protocol's answer on stdout (src/adapters/*).
// Fails closed: anything that goes wrong before an answer is written is a refusal in the agent's terms.
import { Command, CommanderError, Option } from 'commander';
import type { Io } from '../io.js';
import type { Role } from '../../types.js';
import { UsageError } from '../../errors.js';
import { type AgentName, type Classify, type HookOptions, type HookReply, type RerouteMode, AGENTS, errorText, isRecord } from '../../adapters/common.js';
import { claudeCode, handleClaudeCode } from '../../adapters/claude-code.js';
import { codex, handleCodex } from '../../adapters/codex.js';
import { GEMINI_SHELL_TOOLS, handleGemini } from '../../adapters/gemini.js';
import { refuseByExit2 } from '../../adapters/pretooluse.js';
import { tryAppendAudit } from '../../adapters/audit-log.js';
import { classifyOnly, makeClassifier } from '../../adapters/classifier.js';

const HANDLERS: Record<AgentName, (raw: string, classifyAt: (cwd: string) => Classify, opts: HookOptions) => HookReply> = {
  'claude-code': handleClaudeCode,
  codex: handleCodex,
  gemini: handleGemini,
};

/** Broken input, answered the way each agent blocks for sure (see the adapters' notes). */
const REFUSE_INPUT: Record<AgentName, (reason: string) => HookReply> = {
  'claude-code': (r) => claudeCode.refuseInput(r),
  codex: (r) => codex.refuseInput(r),
  gemini: (r) => refuseByExit2('gemini', r),
};

/** Hook input larger than this is refused unread past it (a 1 MiB command plus its JSON envelope fits). */
const STDIN_MAX = 8 * 1024 * 1024;
/** An agent that never closes stdin gets a refusal instead of a hook that hangs until the agent gives up. */
const STDIN_DEADLINE_MS = 10_000;

interface Parsed {
  agent?: string;
  mode?: string;
  allowRewrite: boolean;
  role?: string;
  config?: string;
  classifyOnly: boolean;
}

function parseArgs(args: string[]): Parsed {
  const cmd = new Command('hook')
    .exitOverride()
    .configureOutput({ writeOut: () => {}, writeErr: () => {} })
    .argument('[agent]', `one of ${AGENTS.join(', ')}`)
    .addOption(new Option('--mode <mode>', 'how a reroute is answered').choices(['rewrite', 'suggest']))
    .option('--allow-rewrite', 'claude-code rewrite mode: answer allow instead of ask', false)
    .addOption(new Option('--role <role>').choices(['laptop', 'vm', 'ci']))
    .option('--config <file>')
    .addOption(new Option('--classify-only').hideHelp().default(false))
    .allowExcessArguments(false);
  try {
    cmd.parse(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) throw new UsageError(err.message.replace(/^error: /, ''));
    throw err;
  }
  const o = cmd.opts<{ mode?: string; allowRewrite: boolean; role?: string; config?: string; classifyOnly: boolean }>();
  return { agent: cmd.args[0], ...o };
}

function isAgent(s: string | undefined): s is AgentName {
  return s !== undefined && (AGENTS as readonly string[]).includes(s);
}

async function readStdinBounded(io: Io): Promise<{ text: string } | { error: string }> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<{ error: string }>((res) => {
    timer = setTimeout(() => res({ error: `no end of input after ${STDIN_DEADLINE_MS / 1000} s` }), STDIN_DEADLINE_MS);
    timer.unref();
  });
  try {
    const r = await Promise.race([io.readStdin().then((text) => ({ text })), deadline]);
    if ('text' in r && r.text.length > STDIN_MAX) return { error: `hook input is ${r.text.length} bytes, more than ${STDIN_MAX}` };
    if ('error' in r) {
      // The real stdin is still open; let the process end anyway.
      if (process.stdin.readable) process.stdin.destroy();
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
    allowRewrite: p.allowRewrite || io.env.OFFHOST_HOOK_ALLOW_REWRITE === '1',
    env: io.env,
  };

  let reply: HookReply;
  try {
    reply = await answer(agent, opts, role, p.config, io);
  } catch (err) {
    // A bug must not turn into a silent pass: refuse in the agent's own terms.
    reply = REFUSE_INPUT[agent](`offhost failed: ${errorText(err)}`);
    reply = { ...reply, audit: reply.audit && { ...reply.audit, rule: 'internal-error' } };
  }
  if (reply.audit) tryAppendAudit(reply.audit, io.env, io.stderr, io.clock.now());
  if (reply.stdout) io.stdout(reply.stdout);
  if (reply.stderr) io.stderr(reply.stderr);
  return reply.exitCode;
}

const SHELL_TOOLS: Record<AgentName, readonly string[]> = {
  'claude-code': claudeCode.shellTools,
  codex: codex.shellTools,
  gemini: GEMINI_SHELL_TOOLS,
};

/** False only for a well-formed event about a tool that is not a shell: the guard is not needed for that. */
function needsGuard(agent: AgentName, raw: string): boolean {
  try {
    const ev: unknown = JSON.parse(raw);
    return !(isRecord(ev) && typeof ev.tool_name === 'string' && !SHELL_TOOLS[agent].includes(ev.tool_name));
  } catch {
    return true;
  }
}

async function answer(agent: AgentName, opts: HookOptions, role: Role | undefined, configFile: string | undefined, io: Io): Promise<HookReply> {
  const handler = HANDLERS[agent];
  const input = await readStdinBounded(io);
  let reply: HookReply;
  if ('error' in input) {
    reply = REFUSE_INPUT[agent](input.error);
  } else {
    let classifier: Awaited<ReturnType<typeof makeClassifier>> | null = null;
    let loadError: unknown = null;
    // Other tools (Read, Edit, MCP...) pass without loading the guard at all.
    if (needsGuard(agent, input.text)) {
      try {
        classifier = await makeClassifier({ env: io.env, role, configFile });
      } catch (err) {
        loadError = err;
      }
    }
    const classifyAt = (cwd: string): Classify => {
      if (!classifier) throw loadError instanceof Error ? loadError : new Error(String(loadError ?? 'guard not loaded'));
      return classifier.classifyAt(cwd);
    };
    reply = handler(input.text, classifyAt, opts);
  }
  return reply;
}
