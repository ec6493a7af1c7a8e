// `offhost doctor`: the laptop side, checked and explained (the VM side is `offhost vm status`). The checks
// are a list (src/doctor/index.ts), each independent: config, every agent's hook init can write (run as the
// agent runs it), the shell snippets, the $SHELL wrapper, the shims, the pre-commit hook, the per-user
// installs init recorded, the checkout and root offhost sees, route overrides, lock sharing. Prints one line per finding and, under each problem, what to do; `--format json`
// prints them as one JSON document. Exit 0: nothing to fix; 1: something to fix; 2: doctor itself could not run.
import { Command } from 'commander';
import { EXIT, UsageError } from '../../errors.js';
import { parseWith } from '../commander.js';
import type { Io } from '../../io.js';
import { CHECKS } from '../../doctor/index.js';
import type { DoctorContext, DoctorItem } from '../../doctor/check.js';
import { git } from '../../doctor/basics.js';

export async function run(args: string[], io: Io): Promise<number> {
  const cmd = new Command('offhost doctor')
    .description(
      `Checks this laptop, each door as it is used: the configuration loads; every agent hook init can write is there and its exact command, run as the agent runs it, blocks a heavy call and lets a light one through; the shell snippets and the $SHELL wrapper do the same; the shims refuse a heavy call; the pre-commit hook is in place; the per-user installs init recorded are still there. Changes nothing; the VMs are checked by \`offhost vm status\`. Checks: ${CHECKS.map((c) => c.id).join(', ')}.`,
    )
    .option('--format <format>', 'stylish (one line each, the default) or json')
    .allowExcessArguments(false);
  const early = parseWith(cmd, args, io, { exit: '0 nothing to fix, 1 something to fix, 2 doctor itself could not run.', examples: ['offhost doctor', 'offhost doctor --format json'] });
  if (early !== null) return early;
  const format = cmd.opts<{ format?: string }>().format ?? 'stylish';
  if (format !== 'stylish' && format !== 'json') throw new UsageError(`--format must be stylish or json, not '${format}'`);
  const repo = git(io.cwd, ['rev-parse', '--show-toplevel'], io.env);
  const ctx: DoctorContext = { io, env: io.env, cwd: io.cwd, repo, project: repo ?? io.cwd };
  const items: DoctorItem[] = [];
  for (const c of CHECKS) {
    try {
      items.push(...(await c.run(ctx)));
    } catch (err) {
      // A check that breaks is a problem to fix, never a pass.
      items.push({ check: c.id, ok: false, detail: `the ${c.id} check could not run: ${(err as Error).message}`, fix: 'report this with the output of offhost doctor' });
    }
  }
  const bad = items.filter((i) => !i.ok).length;
  if (format === 'json') {
    io.stdout(`${JSON.stringify({ ok: bad === 0, problems: bad, checks: CHECKS.map((c) => ({ id: c.id, summary: c.summary })), items }, null, 2)}\n`);
    return bad ? EXIT.findings : EXIT.ok;
  }
  for (const it of items) {
    io.stdout(`${it.ok ? (it.note ? 'note' : 'ok  ') : 'FIX '} ${it.check.padEnd(7)} ${it.detail}\n`);
    if (!it.ok && it.fix) io.stdout(`             ${it.fix}\n`);
  }
  io.stdout(bad ? `${bad} thing${bad > 1 ? 's' : ''} to fix; the VMs are checked by \`offhost vm status\`.\n` : 'nothing to fix on this laptop; the VMs are checked by `offhost vm status`.\n');
  return bad ? EXIT.findings : EXIT.ok;
}
