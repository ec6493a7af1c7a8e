// offhost check [--json] [--cwd DIR] [--role R] [--config FILE] [--] COMMAND
// Exit: 0 allow, 1 deny, 3 reroute, 2 usage or config error.
import { EXIT } from '../../errors.js';
import { formatHelp } from '../help.js';
import type { Io } from '../io.js';
import { GUARD_OPTION_HELP, guardCommandOptions, oneCommandLine } from '../common.js';
import { colorEnabled, colorFlag, palette } from '../../report/color.js';
import { loadGuard } from '../../config/load-guard.js';
import type { Verdict } from '../../types.js';
import { withRunRewrite } from '../run-rewrite.js';

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
        examples: ["offhost check 'make build-safe'", "offhost check --cwd engines/lang/koda --json 'make build-safe'"],
      }),
    );
    return EXIT.ok;
  }
  const line = oneCommandLine(positionals, USAGE);
  const opts = guardOptions(io);
  const cwd = opts.cwd;
  const guard = loadGuard(opts);
  const v = withRunRewrite(guard.classify(line, { cwd }), line);
  io.stdout(values.json ? verdictJson(v) : verdictText(line, v, colorEnabled(colorFlag(values), io)));
  return exitFor(v);
}
