// offhost check [--format stylish|json] [--stdin] [--debug] [--cwd DIR] [--role R] [--config FILE] [--] COMMAND
// Exit: 0 allow, 1 deny, 3 reroute, 2 usage or config error.
import { EXIT } from '../../errors.js';
import { formatHelp } from '../help.js';
import type { Io } from '../../io.js';
import { GUARD_OPTION_HELP, commandLineFromStdin, guardCommandOptions, oneCommandLine, outputFormat } from '../common.js';
import { debugTrace, traceDecision, traceGuard, traceLine } from '../../report/debug-trace.js';
import { colorEnabled, colorFlag, palette } from '../../report/color.js';
import { loadGuard } from '../../config/load-guard.js';
import type { Verdict } from '../../types.js';
import { withRunRewrite } from '../../adapters/run-rewrite.js';

const USAGE = 'Usage: offhost check [options] [--] COMMAND';

export const exitFor = (v: Verdict): number => (v.decision === 'allow' ? EXIT.ok : v.decision === 'deny' ? EXIT.deny : EXIT.reroute);

export function verdictJson(v: Verdict): string {
  return JSON.stringify({ decision: v.decision, rule: v.rule, reason: v.reason, route: v.route, rewrite: v.rewrite }) + '\n';
}

export function verdictText(line: string, v: Verdict, color = false): string {
  const c = palette(color);
  const word = v.decision === 'allow' ? c.green(v.decision) : v.decision === 'deny' ? c.red(v.decision) : c.yellow(v.decision);
  const out = [`${c.bold(word)}${v.rule ? ` ${c.dim(`(${v.rule})`)}` : ''}: ${line.length > 120 ? line.slice(0, 117) + '...' : line}`, `  ${v.reason}`];
  if (v.route) {
    out.push(`  route: ${v.route.name} -> ${v.route.vm}, cwd ${v.route.cwd}`);
    out.push(`  on the VM: ${v.route.command}`);
  }
  if (v.rewrite) out.push(`  run instead: ${v.rewrite}`);
  return out.join('\n') + '\n';
}

export async function run(args: string[], io: Io): Promise<number> {
  const { values, positionals, guardOptions } = guardCommandOptions(args, USAGE);
  if (values.help) {
    io.stdout(
      formatHelp({
        usage: [USAGE.replace(/^Usage: /, '')],
        description: 'Classifies one command line as offhost would before running it: allow, deny or reroute (with the\ncommand to run instead). Nothing runs.',
        options: GUARD_OPTION_HELP,
        exit: '0 allow, 1 deny, 3 reroute, 2 usage or config error.',
        examples: ["offhost check 'make build-safe'", "offhost check --cwd engines/lang/koda --format json 'make build-safe'", "echo 'make kasm' | offhost check --stdin --debug"],
      }),
    );
    return EXIT.ok;
  }
  const format = outputFormat(values);
  const line = values.stdin ? await commandLineFromStdin(io, positionals, USAGE) : oneCommandLine(positionals, USAGE);
  const opts = guardOptions(io);
  const cwd = opts.cwd;
  const trace = values.debug ? debugTrace(io) : null;
  if (trace) traceLine(trace, line, values.stdin ? 'standard input' : 'the argument');
  const guard = loadGuard(opts);
  let v: Verdict;
  if (trace) {
    traceGuard(trace, guard, { cwd, env: io.env, role: values.role });
    const explained = guard.explain(line, { cwd });
    traceDecision(trace, explained.decision, explained.verdict);
    v = withRunRewrite(explained.verdict, line);
  } else v = withRunRewrite(guard.classify(line, { cwd }), line);
  io.stdout(format === 'json' ? verdictJson(v) : verdictText(line, v, colorEnabled(colorFlag(values), io)));
  return exitFor(v);
}
