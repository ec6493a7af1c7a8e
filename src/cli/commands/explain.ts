// offhost explain [--format stylish|json] [--stdin] [--debug] [--cwd DIR] [--role R] [--config FILE] [--] COMMAND
// The human view: every command that would run, its cwd, what it was found inside, and the rule.
import { EXIT } from '../../errors.js';
import { formatHelp } from '../help.js';
import type { Io } from '../../io.js';
import { ruleCwdOf } from '../../types.js';
import { GUARD_OPTION_HELP, commandLineFromStdin, guardCommandOptions, oneCommandLine, outputFormat } from '../common.js';
import { debugTrace, traceDecision, traceGuard, traceLine } from '../../report/debug-trace.js';
import { colorEnabled, colorFlag } from '../../report/color.js';
import { loadGuard } from '../../config/load-guard.js';
import { withRunRewrite } from '../../adapters/run-rewrite.js';
import { exitFor, verdictText } from './check.js';
import { standingLines, standingOf } from '../../config/standing.js';

const USAGE = 'Usage: offhost explain [options] [--] COMMAND';

export async function run(args: string[], io: Io): Promise<number> {
  const { values, positionals, guardOptions } = guardCommandOptions(args, USAGE);
  if (values.help) {
    io.stdout(
      formatHelp({
        usage: [USAGE.replace(/^Usage: /, '')],
        description:
          'Shows every command the line would run, the directory it runs in, what it was found inside (a script,\na Makefile recipe, a wrapper), and the rule that decided each; then the verdict. Nothing runs.',
        options: GUARD_OPTION_HELP,
        exit: 'as offhost check (0 allow, 1 deny, 3 reroute, 2 usage or config error).',
        examples: ["offhost explain 'cd engines/lang/koda && make build-safe'", "offhost explain 'bash scripts/e2e.sh'"],
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
  if (trace) traceGuard(trace, guard, { cwd, env: io.env, role: values.role });
  const explained = guard.explain(line, { cwd });
  if (trace) traceDecision(trace, explained.decision, explained.verdict);
  const verdict = withRunRewrite(explained.verdict, line);
  const decision = explained.decision;
  // Where offhost stands here: the checkout it sees, {root}, the rules bound to the checkout (issue 20).
  const standing = standingOf(cwd, guard.config);
  if (format === 'json') {
    const where = { dir: standing.physical, git: standing.git, checkout: standing.checkout, root: guard.config.root, ruleCwd: standing.ruleCwd ?? null, boundRules: standing.boundRules, looksLike: standing.looksLike };
    for (const c of decision?.commands ?? []) ruleCwdOf(c.command); // worked out lazily: shown as a value
    io.stdout(JSON.stringify({ ...verdict, role: guard.role, where }, null, 2) + '\n');
    return exitFor(verdict);
  }
  const out: string[] = [`role: ${guard.role}    config: ${guard.config.sources.join(' < ')}`, ...standingLines(standing, guard.config), ''];
  const cmds = decision?.commands ?? [];
  if (cmds.length === 0) out.push(decision ? 'No command runs.' : 'The line was not parsed.');
  cmds.forEach((c, i) => {
    const cmd = c.command;
    const unknown = new Set(cmd.unknown);
    const argv = cmd.argv.map((a, j) => (unknown.has(j) ? `<unknown:${a}>` : JSON.stringify(a))).join(' ');
    out.push(`${i + 1}. ${cmd.program ?? '<unknown program>'}  argv: ${argv}`);
    out.push(`   cwd: ${cmd.cwd ?? '<unknown>'}${Object.keys(cmd.env).length ? `   env: ${Object.entries(cmd.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}`);
    const ruleCwd = ruleCwdOf(cmd);
    if (ruleCwd !== undefined) out.push(`   the rules see it as: ${ruleCwd} (another checkout of the monorepo)`);
    if (cmd.via.length) out.push(`   found inside: ${cmd.via.join(' > ')}`);
    out.push(`   ${c.decision}${c.rule ? ` by ${c.rule.id} (${c.rule.policy})` : ''}${c.unknown ? ' [depends on something unknown]' : ''}: ${c.reason}`);
  });
  out.push('', `verdict: ${verdictText(line, verdict, colorEnabled(colorFlag(values), io)).trimEnd()}`);
  io.stdout(out.join('\n') + '\n');
  return exitFor(verdict);
}
