// `offhost init`: a small dispatcher.
//   offhost init [--husky] [--notices-dir D] [--dry-run]   husky + lint-staged pre-commit check (src/install/husky.ts)
//   offhost init --agent <agent> [--hook-args ARGS] [--project DIR] [--dry-run]   agent hook settings (src/adapters/init-agent.ts)
//   offhost init --shell <bash|zsh|fish>                   prints the shell snippet (src/adapters/shell-snippet.ts)
import { Command } from 'commander';
import { parseWith } from '../commander.js';
import { EXIT, UsageError } from '../../errors.js';
import type { Io } from '../io.js';

interface Opts {
  husky?: boolean;
  agent?: string;
  shell?: string;
  noticesDir?: string;
  project?: string;
  hookArgs?: string;
  dryRun?: boolean;
}

export async function run(args: string[], io: Io): Promise<number> {
  const cmd = new Command('offhost init')
    .description('set up a repository: husky + lint-staged lock checks (default), agent hooks, or shell integration')
    .option('--husky', 'husky v9 pre-commit running lint-staged -> offhost lint --staged on the lock files (the default)')
    .option('--agent <name>', 'write the pre-exec hook into the agent settings: claude-code, codex, gemini, cursor, copilot, windsurf or opencode')
    .option('--hook-args <args>', "--agent: arguments for the hook command, e.g. '--mode rewrite' (default: keep what an existing entry has)")
    .option('--shell <shell>', 'print the shell integration snippet: bash, zsh or fish')
    .option('--notices-dir <dir>', 'notices folder for the lint-staged glob (default meta/context/notices)')
    .option('--project <dir>', '--agent: project whose settings are written (default: the current folder)')
    .option('--dry-run', 'print what would change, write nothing')
    .allowExcessArguments(false);
  const early = parseWith(cmd, args, io);
  if (early !== null) return early;
  const o = cmd.opts<Opts>();
  const modes = [o.husky, o.agent !== undefined, o.shell !== undefined].filter(Boolean).length;
  if (modes > 1) throw new UsageError('give one of --husky, --agent NAME, --shell SHELL');
  if (o.agent !== undefined) {
    const { initAgent } = await import('../../adapters/init-agent.js');
    const opts: { project?: string; dryRun?: boolean; hookArgs?: string[] } = {};
    if (o.project !== undefined) opts.project = o.project;
    if (o.hookArgs !== undefined) opts.hookArgs = o.hookArgs.split(/\s+/).filter(Boolean);
    if (o.dryRun) opts.dryRun = true;
    return initAgent(o.agent, io, opts);
  }
  if (o.shell !== undefined) {
    const { initShell } = await import('../../adapters/shell-snippet.js');
    return initShell(o.shell, io);
  }
  const { initHusky } = await import('../../install/husky.js');
  const opts: { noticesDir?: string; dryRun?: boolean } = {};
  if (o.noticesDir !== undefined) opts.noticesDir = o.noticesDir;
  if (o.dryRun) opts.dryRun = true;
  return initHusky(io, opts);
}
