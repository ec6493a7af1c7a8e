// `offhost init`: a small dispatcher.
//   offhost init [--husky] [--notices-dir D] [--dry-run]   husky + lint-staged pre-commit check (src/install/husky.ts)
//   offhost init --agent <agent> [--hook-args ARGS] [--project DIR] [--dry-run]   agent hook settings (src/adapters/init-agent.ts)
//   offhost init --shell <bash|zsh|fish>                   prints the shell snippet (src/adapters/shell-snippet.ts)
//   offhost init --shims [--agent claude-code|codex]       installs the exec-time shims (src/shims/, docs/SHIMS.md)
import { Command } from 'commander';
import { join, resolve } from 'node:path';
import { parseWith } from '../commander.js';
import { EXIT, UsageError } from '../../errors.js';
import type { Io } from '../../io.js';

/** The personal settings file under HOME that `init --agent` wrote to (offhost not installed in the project), or null. */
async function personalSettingsWritten(agent: string, project: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const { TARGETS, hookCommand, isAgentName } = await import('../../adapters/init-agent.js');
  if (!isAgentName(agent) || !env.HOME) return null;
  const t = TARGETS[agent];
  if (!t.personalInHome || t.personal === '' || hookCommand(agent, project, []).projectRelative) return null;
  return join(env.HOME, t.personal);
}

/**
 * Says which checkout of the monorepo offhost sees in the project (issue 20): a new user learns there
 * whether the policy applies here, and is warned when the project looks like the monorepo while it does not.
 */
async function sayWhereOffhostStands(io: Io, project: string): Promise<void> {
  const { loadConfig } = await import('../../config/load-config.js');
  const { checkoutCheck } = await import('../../config/standing.js');
  let c;
  try {
    c = checkoutCheck(project, io.env, loadConfig({ cwd: project, env: io.env }));
  } catch {
    return; // a config that does not load: `offhost doctor` says where
  }
  io.stdout(`${c.ok ? 'offhost sees' : 'WARNING:'} ${c.detail}
${c.fix ? `  ${c.fix}
` : ''}`);
}

interface Opts {
  husky?: boolean;
  agent?: string;
  shell?: string;
  noticesDir?: string;
  project?: string;
  hookArgs?: string;
  dryRun?: boolean;
  shims?: boolean;
}

export async function run(args: string[], io: Io): Promise<number> {
  const cmd = new Command('offhost init')
    .description('Sets up a repository: the husky + lint-staged pre-commit lock check (the default), an agent\'s pre-exec hook (--agent), the exec-time shims (--shims), or prints the shell integration (--shell). Idempotent: run it again after an upgrade. `offhost uninstall` takes out what it added.')
    .option('--husky', 'husky v9 pre-commit running lint-staged -> offhost lint --staged on the lock files (the default)')
    .option('--agent <name>', 'write the pre-exec hook into the agent settings: claude-code, codex, gemini, cursor, copilot, windsurf or opencode')
    .option('--hook-args <args>', "--agent: arguments for the hook command, e.g. '--mode rewrite' (default: keep what an existing entry has)")
    .option('--shell <shell>', 'print the shell integration snippet: bash, zsh or fish')
    .option('--notices-dir <dir>', 'notices folder for the lint-staged glob (default meta/context/notices)')
    .option('--project <dir>', '--agent: project whose settings are written (default: the current folder)')
    .option('--shims', 'install the exec-time shims (with --agent claude-code|codex: also put them on that agent\'s PATH)')
    .option('--dry-run', 'print what would change, write nothing')
    .allowExcessArguments(false);
  const early = parseWith(cmd, args, io, {
    exit: '0 done (or nothing to change), 2 usage error or a file offhost will not overwrite (nothing changed).',
    examples: ['offhost init', 'offhost init --agent claude-code', 'offhost init --shims --agent claude-code', 'offhost init --shell bash > ~/.config/offhost/offhost.bash'],
  });
  if (early !== null) return early;
  const o = cmd.opts<Opts>();
  // Per-user things init writes (the shims folder, an agent's personal settings) are recorded with the
  // repository that asked for them, so that `offhost uninstall` removes them with the last one
  // (src/install/user-wiring.ts). The record is read first: one offhost cannot read stops init here.
  const wiring = await import('../../install/user-wiring.js');
  wiring.readLedger(io.env);
  const project = resolve(io.cwd, o.project ?? '.');
  if (o.shims) {
    const { initShims } = await import('../../shims/init.js');
    const status = await initShims(io, { ...(o.agent !== undefined ? { agent: o.agent } : {}), ...(o.project !== undefined ? { project: o.project } : {}), ...(o.dryRun ? { dryRun: true } : {}) });
    if (status === EXIT.ok && !o.dryRun) {
      const { defaultShimsDir } = await import('../../shims/install.js');
      const dir = defaultShimsDir(io.env);
      const repo = await wiring.repositoryOf(project, io.env);
      wiring.recordUse(io.env, { kind: 'shims', path: dir }, repo);
      io.stdout(`${wiring.recordedLine(io.env, dir, repo)}\n`);
    }
    return status;
  }
  const modes = [o.husky, o.agent !== undefined, o.shell !== undefined].filter(Boolean).length;
  if (modes > 1) throw new UsageError('give one of --husky, --agent NAME, --shell SHELL');
  if (o.agent !== undefined) {
    const { initAgent } = await import('../../adapters/init-agent.js');
    const opts: { project?: string; dryRun?: boolean; hookArgs?: string[] } = {};
    if (o.project !== undefined) opts.project = o.project;
    if (o.hookArgs !== undefined) opts.hookArgs = o.hookArgs.split(/\s+/).filter(Boolean);
    if (o.dryRun) opts.dryRun = true;
    const status = await initAgent(o.agent, io, opts);
    const personal = status === EXIT.ok && !o.dryRun ? await personalSettingsWritten(o.agent, project, io.env) : null;
    if (personal !== null) {
      const repo = await wiring.repositoryOf(project, io.env);
      wiring.recordUse(io.env, { kind: 'agent-settings', agent: o.agent, path: personal }, repo);
      io.stdout(`${wiring.recordedLine(io.env, personal, repo)}\n`);
    }
    if (status === EXIT.ok && !o.dryRun) await sayWhereOffhostStands(io, project);
    return status;
  }
  if (o.shell !== undefined) {
    const { initShell } = await import('../../adapters/shell-snippet.js');
    return initShell(o.shell, io);
  }
  const { initHusky } = await import('../../install/husky.js');
  const opts: { noticesDir?: string; dryRun?: boolean } = {};
  if (o.noticesDir !== undefined) opts.noticesDir = o.noticesDir;
  if (o.dryRun) opts.dryRun = true;
  const status = await initHusky(io, opts);
  if (status === EXIT.ok && !o.dryRun) await sayWhereOffhostStands(io, io.cwd);
  return status;
}
