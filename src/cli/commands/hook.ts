// `offhost hook <agent> [--mode rewrite|suggest] [--allow-rewrite] [--role R] [--config F]`
// A pre-exec hook: the agent's event JSON on stdin, its protocol's answer on stdout. This file parses the
// options; the hook itself (reading the event within its deadline, the guard, the answer, the audit line)
// is src/adapters/hook-run.ts. Fails closed: anything that goes wrong before an answer is written is a
// refusal in the agent's terms.
import type { Io } from '../../io.js';
import type { Role } from '../../types.js';
import { UsageError } from '../../errors.js';
import { didYouMean } from '../suggest.js';
import { AGENTS } from '../../adapters/common.js';
import { classifyOnly } from '../../adapters/classifier.js';
import { isAgent, runHook } from '../../adapters/hook-run.js';

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
  return runHook(p.agent, { mode: p.mode as 'rewrite' | 'suggest' | undefined, allowRewrite: p.allowRewrite, role, configFile: p.config, debug: p.debug }, io);
}
