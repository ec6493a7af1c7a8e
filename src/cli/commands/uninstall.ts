// `offhost uninstall [--project DIR] [--dry-run]`: removes what `offhost init` added to the repository (the
// husky hook lines, the lint-staged entry, the agent hooks), nothing else, and says what it removed
// (src/install/uninstall.ts).
import { Command } from 'commander';
import { resolve } from 'node:path';
import { parseWith } from '../commander.js';
import type { Io } from '../../io.js';

interface Opts {
  project?: string;
  dryRun?: boolean;
  shared?: boolean;
}

export async function run(args: string[], io: Io): Promise<number> {
  const cmd = new Command('offhost uninstall')
    .description('Removes what `offhost init` added, and nothing else: the .husky/pre-commit lines, the lint-staged entry, the agent hooks; per user (the shims folder, personal agent settings), this repository\'s share, and the thing itself when no other repository uses it. Says what it removed, and what it kept and why.')
    .option('--project <dir>', 'project whose agent settings are cleaned (default: the repository root)')
    .option('--shared', 'also remove the per-user parts (the shims folder, personal agent hooks) even while other repositories use them')
    .option('--dry-run', 'print what would be removed, change nothing')
    .allowExcessArguments(false);
  const early = parseWith(cmd, args, io, {
    exit: '0 done (or nothing to remove), 2 a file offhost cannot read safely, or not a repository (nothing changed).',
    examples: ['offhost uninstall --dry-run', 'offhost uninstall', 'offhost uninstall --shared'],
  });
  if (early !== null) return early;
  const o = cmd.opts<Opts>();
  const { uninstall } = await import('../../install/uninstall.js');
  return uninstall(io, { ...(o.project !== undefined ? { project: resolve(io.cwd, o.project) } : {}), ...(o.dryRun ? { dryRun: true } : {}), ...(o.shared ? { shared: true } : {}) });
}
