// `offhost init --shims [--agent claude-code|codex] [--project DIR] [--dry-run]`.
import type { Io } from '../io.js';
import { EXIT, UsageError } from '../errors.js';
import { pathLine } from './path-line.js';
import { shimBin } from './ensure.js';
import { defaultShimsDir, installShims } from './install.js';
import { planShims } from './plan.js';
import { claudeSessionStartCommand, codexLines, wireClaudeCode } from './agents.js';

export async function initShims(io: Io, opts: { agent?: string; project?: string; dryRun?: boolean }): Promise<number> {
  if (opts.agent !== undefined && opts.agent !== 'claude-code' && opts.agent !== 'codex') {
    throw new UsageError(`--shims --agent: claude-code or codex (${opts.agent} has no setting that puts a directory on its shell tool's PATH; see docs/SHIMS.md)`);
  }
  const dir = defaultShimsDir(io.env);
  const bin = shimBin(io.env);
  const out: string[] = [];
  if (opts.dryRun) {
    const plan = planShims({ cwd: io.cwd, env: io.env });
    out.push(`would write ${plan.programs.length} shims in ${dir}: ${plan.programs.map((p) => p.name).join(' ')}`);
  } else {
    const r = installShims({ dir, cwd: io.cwd, env: io.env, node: process.execPath, bin });
    out.push(`offhost: ${r.written.length} shims in ${dir}${r.removed.length ? ` (removed: ${r.removed.join(', ')})` : ''}`);
  }
  if (opts.agent === 'claude-code') {
    const w = wireClaudeCode(opts.project ?? io.cwd, claudeSessionStartCommand(process.execPath, bin), opts.dryRun);
    out.push(w.changed ? `${opts.dryRun ? 'would add' : 'added'} a SessionStart hook to ${w.file}: it puts the shims first on PATH for every Bash tool command (restart Claude Code sessions)` : `${w.file} already has the SessionStart hook`);
  } else if (opts.agent === 'codex') {
    out.push(`Codex: add to ~/.codex/config.toml (or the project's .codex/config.toml; PATH is a literal there: run this again after PATH changes):\n${codexLines(dir, io.env.PATH)}`);
  } else {
    out.push(
      `For your own shells: the bash/zsh integration (\`offhost init --shell bash|zsh\`) puts them first on PATH; or add to ~/.bashrc / ~/.zshrc:\n  ${pathLine(dir).trimEnd()}`,
      'offhost shell (the $SHELL wrapper) puts them first for every command it runs.',
    );
  }
  out.push(`Run it again after changing offhost's configuration (idempotent); remove them with \`offhost shim remove\`.`);
  io.stdout(`${out.join('\n')}\n`);
  return EXIT.ok;
}
