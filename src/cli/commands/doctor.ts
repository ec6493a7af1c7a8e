// `offhost doctor`: the laptop side, checked and explained (the VM side is `offhost vm status`).
//   config   every config file in force loads (file:line on an error);
//   agents   the agent hooks (.claude/settings.json, .codex/hooks.json, .gemini/settings.json, here and
//            in ~) that call offhost: the node and offhost paths each one calls still exist;
//   husky    .husky/pre-commit runs `offhost lint --staged`, and git runs .husky (core.hooksPath);
//   shims    the shim directory (OFFHOST_SHIMS_DIR or ~/.local/share/offhost/shims): the node, offhost
//            and bash its marker names still exist;
//   shell    an rc file (~/.bashrc, ~/.zshrc) that sets offhost up: the node/offhost paths it calls exist;
//   shared   the per-user things init recorded (src/install/user-wiring.ts): each still there while a
//            repository that asked for it exists;
//   locks    where this clone's VM locks are shared (src/locks/sharing-check.ts).
// Prints one line per check and, under each problem, what to do. Exit 0: nothing to fix; 1: something
// to fix; 2: doctor itself could not run.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { EXIT } from '../../errors.js';
import { parseWith } from '../commander.js';
import type { Io } from '../io.js';
import { configFiles } from '../../config/discover.js';
import { loadConfig } from '../../config/load-config.js';
import { checkoutCheck } from '../../config/standing.js';
import { routeOverrideItems } from '../../vms/route-overrides.js';
import { parse } from '../../shell/parser.js';
import { commandsOf } from '../../shell/commands.js';
import { runGitSync } from '../../git/run.js';
import { defaultShimsDir, readMarker } from '../../shims/install.js';
import { MARKER } from '../../shims/script.js';
import { ledgerPath, readLedger } from '../../install/user-wiring.js';
import { lockSharingCheck } from '../../locks/sharing-check.js';

interface Item {
  area: string;
  ok: boolean;
  /** Informational: not a problem (nothing set up there). */
  note?: boolean;
  detail: string;
  fix?: string;
}

const AGENT_FILES: { agent: string; file: string; event: string }[] = [
  { agent: 'claude-code', file: '.claude/settings.json', event: 'PreToolUse' },
  { agent: 'claude-code', file: '.claude/settings.local.json', event: 'PreToolUse' },
  { agent: 'codex', file: '.codex/hooks.json', event: 'PreToolUse' },
  { agent: 'gemini', file: '.gemini/settings.json', event: 'BeforeTool' },
];

function executable(p: string): boolean {
  try {
    return statSync(p).isFile() && (accessSync(p, constants.X_OK), true);
  } catch {
    return false;
  }
}

/** The hook commands in a settings file that call offhost. */
function hookCommands(json: unknown, event: string): string[] {
  const out: string[] = [];
  const entries = (json as { hooks?: Record<string, unknown> } | null)?.hooks?.[event];
  if (!Array.isArray(entries)) return out;
  for (const e of entries) for (const h of (e as { hooks?: unknown[] })?.hooks ?? []) {
    const c = (h as { command?: unknown })?.command;
    if (typeof c === 'string' && /offhost/.test(c)) out.push(c);
  }
  return out;
}

/** The absolute paths a hook command runs (node, then the offhost script), read with offhost's own parser. */
function pathsOf(command: string): string[] {
  try {
    const [c] = commandsOf(parse(command), command, { cwd: '/', env: {} });
    if (!c) return [];
    // Codex, Cursor and Windsurf hooks are written as /bin/sh -c '…' (any login shell runs them): look inside.
    if (c.argv.length === 3 && /(^|\/)sh$/.test(c.argv[0]!) && c.argv[1] === '-c') return pathsOf(c.argv[2]!);
    return c.argv.filter((w, i) => i === 0 || /offhost[^/]*\.(c|m)?js$/.test(w)).filter((w) => w.startsWith('/'));
  } catch {
    return [];
  }
}

function checkAgents(base: string, where: string, items: Item[]): number {
  let found = 0;
  for (const a of AGENT_FILES) {
    const file = join(base, a.file);
    if (!existsSync(file)) continue;
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      items.push({ area: 'agents', ok: false, detail: `${where}${a.file} is not valid JSON (${(err as Error).message})`, fix: `fix the file, then \`offhost init --agent ${a.agent}\`` });
      continue;
    }
    const cmds = hookCommands(json, a.event);
    if (cmds.length === 0) continue;
    found++;
    for (const c of cmds) {
      const missing = pathsOf(c).filter((p) => !executable(p) && !existsSync(p));
      if (missing.length) {
        items.push({
          area: 'agents',
          ok: false,
          detail: `${where}${a.file}: the ${a.agent} hook calls ${missing.join(' and ')}, which no longer exist${missing.length > 1 ? '' : 's'} (node upgraded or offhost moved?): every command the agent runs is then refused`,
          fix: `run \`offhost init --agent ${a.agent}\` again in ${base} (it rewrites the hook with the current paths)`,
        });
      } else items.push({ area: 'agents', ok: true, detail: `${where}${a.file}: the ${a.agent} hook calls offhost (${pathsOf(c).join(' ') || c})` });
    }
  }
  return found;
}

function git(cwd: string, args: string[], env: NodeJS.ProcessEnv): string | null {
  const r = runGitSync(args, { cwd, env });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

/** The record of per-user installs (src/install/user-wiring.ts): each shared thing still there, who uses it. */
function checkInstalls(env: NodeJS.ProcessEnv, items: Item[]): void {
  let ledger: ReturnType<typeof readLedger>;
  try {
    ledger = readLedger(env);
  } catch (err) {
    items.push({ area: 'shared', ok: false, detail: (err as Error).message, fix: `fix or remove ${ledgerPath(env)} (then run \`offhost init --shims\` / \`offhost init --agent NAME\` again in each repository that uses them)` });
    return;
  }
  for (const w of ledger.wiring) {
    const live = w.repositories.filter((r) => existsSync(r));
    const gone = w.repositories.filter((r) => !existsSync(r));
    const what = w.kind === 'shims' ? 'the shims folder' : `${w.agent ?? 'an agent'}'s personal settings`;
    const there = w.kind === 'shims' ? readMarker(w.path) !== null : existsSync(w.path) && /offhost/.test(readFileSync(w.path, 'utf8'));
    const users = `${live.length} repositor${live.length === 1 ? 'y' : 'ies'} use${live.length === 1 ? 's' : ''} it${gone.length ? `; recorded for ${gone.join(', ')}, which no longer exist${gone.length === 1 ? 's' : ''} (dropped at the next uninstall)` : ''}`;
    if (!there && live.length) {
      items.push({ area: 'shared', ok: false, detail: `${w.path} (${what}) is gone, but ${users}`, fix: w.kind === 'shims' ? 'run `offhost init --shims` again in one of them' : `run \`offhost init --agent ${w.agent ?? 'NAME'}\` again in one of them` });
    } else items.push({ area: 'shared', ok: true, note: !there, detail: `${w.path} (${what}, per user): ${users}` });
  }
}

export async function run(args: string[], io: Io): Promise<number> {
  const cmd = new Command('offhost doctor')
    .description(
      'Checks this laptop: the configuration loads, the agent hooks and the shims are wired and call paths that exist, the pre-commit hook is in place, the per-user installs init recorded are still there. Prints one line per check and, under each problem, what to run. Changes nothing; the VMs are checked by `offhost vm status`.',
    )
    .allowExcessArguments(false);
  const early = parseWith(cmd, args, io, { exit: '0 nothing to fix, 1 something to fix, 2 doctor itself could not run.', examples: ['offhost doctor'] });
  if (early !== null) return early;
  const items: Item[] = [];
  const env = io.env;
  // Config.
  try {
    const files = configFiles({ cwd: io.cwd, env });
    const c = loadConfig({ cwd: io.cwd, env });
    items.push({ area: 'config', ok: true, detail: `${files.length ? files.join(', ') : 'built-in rules only'}: ${c.rules.length} rules, ${c.vms.size} VMs, ${c.routes.size} routes` });
    items.push(checkoutCheck(io.cwd, env, c));
    for (const o of routeOverrideItems(c)) items.push({ area: 'routes', ...o });
  } catch (err) {
    items.push({ area: 'config', ok: false, detail: (err as Error).message, fix: 'fix that line; `offhost rules` shows the rules once it loads' });
  }
  // Agent hooks, in the project and in ~.
  const repo = git(io.cwd, ['rev-parse', '--show-toplevel'], env);
  const project = repo ?? io.cwd;
  let hooks = checkAgents(project, '', items);
  if (env.HOME && env.HOME !== project) hooks += checkAgents(env.HOME, '~/', items);
  if (hooks === 0) items.push({ area: 'agents', ok: false, detail: 'no agent hook calls offhost (here or in ~)', fix: 'run `offhost init --agent claude-code` (or codex, gemini) in the project' });
  // husky pre-commit.
  if (repo) {
    const pre = join(repo, '.husky', 'pre-commit');
    const hooksPath = git(repo, ['config', '--get', 'core.hooksPath'], env);
    if (!existsSync(pre) || !/offhost lint --staged|lint-staged/.test(readFileSync(pre, 'utf8'))) {
      items.push({ area: 'husky', ok: false, detail: '.husky/pre-commit does not run offhost\'s lock checks', fix: 'run `offhost init` at the repository root' });
    } else if (!hooksPath || !hooksPath.startsWith('.husky')) {
      items.push({ area: 'husky', ok: false, detail: `.husky/pre-commit exists but git does not run it (core.hooksPath is ${hooksPath ?? 'unset'})`, fix: 'run `npm install` (husky\'s prepare script sets core.hooksPath) or `npx husky`' });
    } else items.push({ area: 'husky', ok: true, detail: `.husky/pre-commit runs the lock checks (core.hooksPath ${hooksPath})` });
  } else items.push({ area: 'husky', ok: true, note: true, detail: `${io.cwd} is in no git repository: no pre-commit hook to check` });
  // Shell integration (`offhost init --shell bash|zsh` pasted or eval'd into an rc file): the paths it calls.
  for (const rc of ['.bashrc', '.bash_profile', '.zshrc']) {
    const file = env.HOME ? join(env.HOME, rc) : null;
    if (!file || !existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (!/offhost/.test(text)) continue;
    const paths = [...new Set([...text.matchAll(/(\/[^\s'"`;|&()]*\/(?:node|offhost[^\s'"`;|&()/]*\.(?:c|m)?js))(?=[\s'"`;|&()]|$)/g)].map((m) => m[1]!))];
    const missing = paths.filter((p) => !existsSync(p));
    if (missing.length) items.push({ area: 'shell', ok: false, detail: `~/${rc}: the offhost integration calls ${missing.join(', ')}, which no longer exist${missing.length > 1 ? '' : 's'}`, fix: `regenerate it: \`offhost init --shell ${rc.includes('zsh') ? 'zsh' : 'bash'}\` and replace the block in ~/${rc}` });
    else items.push({ area: 'shell', ok: true, detail: `~/${rc} sets up offhost${paths.length ? ` (${paths.join(' ')})` : ''}` });
  }
  // Shims.
  let shims: string | null = null;
  try {
    shims = defaultShimsDir(env);
  } catch {
    /* HOME unset and no OFFHOST_SHIMS_DIR: no shim directory */
  }
  const marker = shims ? join(shims, MARKER) : null;
  if (marker && existsSync(marker)) {
    try {
      const m = JSON.parse(readFileSync(marker, 'utf8')) as { node?: string; bin?: string; bash?: string; programs?: string[] };
      const missing = [m.node, m.bin, m.bash].filter((p): p is string => typeof p === 'string' && !existsSync(p));
      const onPath = (env.PATH ?? '').split(':').includes(shims!);
      if (missing.length) items.push({ area: 'shims', ok: false, detail: `${shims}: the shims call ${missing.join(', ')}, which no longer exist`, fix: 'run `offhost shim install` again' });
      else items.push({ area: 'shims', ok: true, detail: `${shims}: ${m.programs?.length ?? 0} shims${onPath ? ', on PATH here' : ' (not on this shell\'s PATH: the doors put them first on PATH themselves)'}` });
    } catch (err) {
      items.push({ area: 'shims', ok: false, detail: `${marker} cannot be read (${(err as Error).message})`, fix: 'run `offhost shim install` again' });
    }
  } else items.push({ area: 'shims', ok: true, note: true, detail: 'no shim directory (optional: `offhost init --shims`)' });
  checkInstalls(env, items);
  // Where this clone's VM locks are shared (src/locks/sharing-check.ts, docs/LOCKS.md).
  const locks = await lockSharingCheck(io.cwd, env).catch((err: Error) => ({ ok: false, detail: `locks: ${err.message}`, fix: 'see `offhost lock status`' }));
  if (locks) items.push({ area: 'locks', ...locks });

  for (const it of items) {
    io.stdout(`${it.ok ? (it.note ? 'note' : 'ok  ') : 'FIX '} ${it.area.padEnd(6)} ${it.detail}\n`);
    if (!it.ok && it.fix) io.stdout(`            ${it.fix}\n`);
  }
  const bad = items.filter((i) => !i.ok).length;
  io.stdout(bad ? `${bad} thing${bad > 1 ? 's' : ''} to fix; the VMs are checked by \`offhost vm status\`.\n` : 'nothing to fix on this laptop; the VMs are checked by `offhost vm status`.\n');
  return bad ? EXIT.findings : EXIT.ok;
}
