// `offhost uninstall`, the per-user part: what init put outside the repository, shared by every repository of
// this user (src/install/user-wiring.ts keeps who asked for what):
//   - the shims folder (`init --shims`): removed (exactly the files its marker lists) when this repository
//     asked for it and no other recorded repository still exists; else kept, with who still uses it;
//   - an agent's personal settings file (`init --agent NAME` where offhost is not installed in the project):
//     offhost's hooks taken out of it on the same terms, every other entry kept;
//   - `--shared`: both go now, whoever else uses them (and uninstall says who);
//   - the shell integration (~/.config/offhost/offhost.<shell>, the lines in rc files) and the Codex PATH
//     lines of `init --shims --agent codex` (~/.codex/config.toml): init never writes them (it prints them;
//     the user puts them in place), so uninstall never edits them: it names each line, so that the user can
//     take it out.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defaultShimsDir, readMarker, removeShims } from '../shims/install.js';
import { canonical, ledgerWithout, readLedger, removeEmptyOffhostFolder, usersOf, type Ledger, type WiringKind } from './user-wiring.js';
import { agentFiles, planAgentFile, type AgentFile, type Plan } from './agent-settings.js';

export interface UserWiringPlan {
  plans: Plan[];
  /** What stays, each with why. */
  kept: string[];
  /** The record after the plans are carried out (applied to the record as it is then: updateLedger). */
  nextLedger: (ledger: Ledger) => Ledger | null;
}

/** `~/…` for a path under HOME. */
export function homeShow(home: string | undefined): (p: string) => string {
  return (p) => (home && p.startsWith(`${home}/`) ? `~/${p.slice(home.length + 1)}` : p);
}

function list(repos: string[]): string {
  return repos.length <= 3 ? repos.join(', ') : `${repos.slice(0, 3).join(', ')} and ${repos.length - 3} more`;
}

/** The personal settings files init can write under HOME. */
function personalFiles(home: string | undefined): (AgentFile & { path: string })[] {
  if (!home) return [];
  return agentFiles()
    .filter((f) => f.inHome)
    .map((f) => ({ ...f, path: join(home, f.rel) }));
}

/** The shims offhost wrote (exactly the files its marker lists), then offhost's own parent folder if that left it empty. */
function removeShimsFolder(dir: string): void {
  removeShims(dir);
  removeEmptyOffhostFolder(dirname(dir));
}

/** Files of the user's that init prints lines for (the shell rc files; Codex's config.toml for `init --shims --agent codex`). */
const USER_FILES = ['.bashrc', '.bash_profile', '.profile', '.zshrc', '.zprofile', '.config/fish/config.fish', '.codex/config.toml'];

export function planUserWiring(env: NodeJS.ProcessEnv, repository: string, opts: { shared: boolean; skip: ReadonlySet<string> }): UserWiringPlan {
  const ledger = readLedger(env);
  const home = env.HOME;
  const show = homeShow(home);
  const repo = canonical(repository);
  const plans: Plan[] = [];
  const kept: string[] = [];
  const removed: { kind: WiringKind; path: string }[] = [];

  /** The one decision for a per-user thing: remove it, or keep it and say why. */
  const decide = (kind: WiringKind, path: string, what: string, plan: Plan, regrows: string): void => {
    const u = usersOf(ledger, kind, path, repo);
    if ((u.recorded && u.others.length === 0) || opts.shared) {
      const why = !opts.shared
        ? 'only this repository used it'
        : u.others.length
          ? `--shared: ${list(u.others)} still use${u.others.length === 1 ? 's' : ''} it; ${regrows}`
          : u.recorded
            ? 'only this repository used it'
            : '--shared: no repository had recorded it';
      const goneNote = u.gone.length ? `; ${list(u.gone)} no longer exist${u.gone.length === 1 ? 's' : ''}` : '';
      const head = `${show(path)}: `;
      const rest = plan.what.startsWith(head) ? plan.what.slice(head.length) : plan.what;
      plans.push({ ...plan, what: `${show(path)} (${what}, per user; ${why}${goneNote}): ${rest}` });
      removed.push({ kind, path });
    } else if (u.recorded) {
      kept.push(`kept: ${show(path)} (${what}, per user): still used by ${list(u.others)}; it goes with the last of them, or now with \`offhost uninstall --shared\``);
    } else {
      kept.push(
        `not touched: ${show(path)} (${what}, per user): not set up for this repository by \`offhost init\`${u.others.length ? ` (used by ${list(u.others)})` : u.gone.length ? ` (set up for ${list(u.gone)}, which no longer exist${u.gone.length === 1 ? 's' : ''})` : ''}; \`offhost uninstall --shared\` removes it`,
      );
    }
  };

  // The shims folders: the one in force now, and any init recorded under another OFFHOST_SHIMS_DIR.
  const shimDirs = new Set(ledger.wiring.filter((w) => w.kind === 'shims').map((w) => w.path));
  try {
    shimDirs.add(defaultShimsDir(env));
  } catch {
    /* HOME unset and no OFFHOST_SHIMS_DIR: no default folder */
  }
  for (const dir of shimDirs) {
    const marker = readMarker(dir);
    if (!marker) continue; // gone already (or never written): nothing to remove
    decide(
      'shims',
      dir,
      'the shims folder',
      { path: dir, text: null, what: `${show(dir)}: removed the ${marker.programs.length} shims offhost wrote there`, apply: () => removeShimsFolder(dir) },
      'their Claude Code SessionStart hooks would write the shims again: run `offhost uninstall` there',
    );
  }

  // Personal agent settings: offhost's hook there answers for every project of this user.
  const files = new Map<string, Pick<AgentFile, 'agent' | 'shape' | 'jsonc' | 'topLevel'>>(personalFiles(home).map((f) => [f.path, f]));
  // A file init recorded elsewhere (HOME was another folder then): read as that agent's file is.
  for (const w of ledger.wiring) {
    if (w.kind !== 'agent-settings' || files.has(w.path)) continue;
    const like = agentFiles().find((f) => f.agent === w.agent && f.inHome);
    files.set(w.path, like ?? { agent: w.agent ?? '', shape: 'groups', jsonc: false, topLevel: {} });
  }
  for (const [path, f] of files) {
    const agent = f.agent;
    if (opts.skip.has(path)) continue; // the repository's own file (a repository at HOME): done already
    const plan = planAgentFile(path, f, show);
    if (!plan) continue;
    decide('agent-settings', path, `${agent ? `${agent}'s ` : ''}personal settings`, plan, 'they lose the hook too: run `offhost init --agent` there to put it back');
  }

  // The shell integration: the user's own lines, named with where they are.
  if (home) {
    for (const sh of ['bash', 'zsh', 'fish']) {
      const snippet = join(home, '.config', 'offhost', `offhost.${sh}`);
      if (existsSync(snippet)) kept.push(`not touched: ${show(snippet)} (the ${sh} integration, per user: you put it there; it checks every command line of your shells): remove the line sourcing it, then the file`);
    }
    for (const rc of USER_FILES) {
      const file = join(home, rc);
      if (!existsSync(file)) continue;
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        continue;
      }
      text.split('\n').forEach((line, i) => {
        if (!/offhost/.test(line) || /^\s*#/.test(line)) return;
        const shimsGone = removed.some((r) => r.kind === 'shims' && line.includes(r.path));
        kept.push(`not touched: ${show(file)}:${i + 1}: ${line.trim()} (your line; init never edits this file${shimsGone ? '; the shims folder it puts on PATH is gone, so it does nothing now' : ''}): remove it to stop it`);
      });
    }
  }

  const nextLedger = (current: Ledger): Ledger | null => {
    const next = ledgerWithout(current, repo, removed);
    return JSON.stringify(next.wiring) === JSON.stringify(current.wiring) ? null : next;
  };
  return { plans, kept, nextLedger };
}
