// offhost check [--json] [--cwd DIR] [--role R] [--config FILE] [--] COMMAND
// Exit: 0 allow, 1 deny, 3 reroute, 2 usage or config error.
import { EXIT } from '../../errors.js';
import type { Io } from '../io.js';
import { parseOptions, oneCommandLine } from '../common.js';
import { loadGuard } from '../../policy/guard.js';
import type { Verdict } from '../../types.js';

const USAGE = 'Usage: offhost check [--json] [--cwd DIR] [--role laptop|vm|ci] [--config FILE] [--] COMMAND';

export const exitFor = (v: Verdict): number => (v.decision === 'allow' ? EXIT.ok : v.decision === 'deny' ? EXIT.deny : EXIT.reroute);

export function verdictJson(v: Verdict): string {
  return JSON.stringify({ decision: v.decision, rule: v.rule, reason: v.reason, route: v.route, rewrite: v.rewrite }) + '\n';
}

export function verdictText(line: string, v: Verdict): string {
  const out = [`${v.decision}${v.rule ? ` (${v.rule})` : ''}: ${line.length > 120 ? line.slice(0, 117) + '...' : line}`, `  ${v.reason}`];
  if (v.route) {
    out.push(`  route: ${v.route.name} -> ${v.route.vm}, cwd ${v.route.cwd}`);
    out.push(`  on the VM: ${v.route.command}`);
  }
  if (v.rewrite) out.push(`  run instead: ${v.rewrite}`);
  return out.join('\n') + '\n';
}

export async function run(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, cwd: { type: 'string' }, role: { type: 'string' }, config: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    USAGE,
  );
  if (values.help) {
    io.stdout(`${USAGE}\n\nClassifies one command line: allow (exit 0), deny (1), reroute (3); 2 on a usage or config error.\n`);
    return EXIT.ok;
  }
  const line = oneCommandLine(positionals, USAGE);
  const cwd = values.cwd ?? io.cwd;
  const guard = loadGuard({ cwd, env: io.env, ...(values.role !== undefined ? { role: values.role as never } : {}), ...(values.config !== undefined ? { configFile: values.config } : {}) });
  const v = guard.classify(line, { cwd });
  io.stdout(values.json ? verdictJson(v) : verdictText(line, v));
  return exitFor(v);
}
