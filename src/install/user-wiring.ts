// What `offhost init` wires per user, outside any repository, and which repositories asked for it.
//
// Two things init can put in the user's own space serve every repository on the account at once: the
// shims folder (`init --shims`: ~/.local/share/offhost/shims) and an agent's personal settings file
// (`init --agent codex|gemini|cursor|windsurf|opencode` in a project where offhost is not installed:
// ~/.codex/hooks.json, ...). Removing them when one repository is uninstalled would take the guard away from
// the others; keeping them forever would leave offhost behind. So init records here which repository asked
// for each, and `offhost uninstall` takes a repository off the list and removes the thing itself only when
// no other repository on the list still exists (or when asked to with --shared).
//
// The record: <state dir>/installs.json (the state directory of src/run/record.ts: $OFFHOST_STATE_DIR, else
// $XDG_STATE_HOME/offhost, else ~/.local/state/offhost), written atomically (beside it, then renamed). A
// record offhost cannot read stops init and uninstall with its name, before anything is changed.
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../errors.js';
import { stateDir } from '../run/record.js';

export type WiringKind = 'shims' | 'agent-settings';

export interface SharedWiring {
  kind: WiringKind;
  /** The folder (shims) or file (agent settings), absolute. */
  path: string;
  /** agent-settings: which agent's file. */
  agent?: string;
  /** The repositories (their real paths) that asked for it, in the order they did. */
  repositories: string[];
}

export interface Ledger {
  version: 1;
  wiring: SharedWiring[];
}

export function ledgerPath(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'installs.json');
}

/** The path with symbolic links resolved where it exists, so a symlinked checkout is one repository. */
export function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export function readLedger(env: NodeJS.ProcessEnv): Ledger {
  const file = ledgerPath(env);
  if (!existsSync(file)) return { version: 1, wiring: [] };
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot be read as offhost's record of per-user installs (${(err as Error).message}); fix or remove it — nothing was changed`, file);
  }
  const v = value as Partial<Ledger> | null;
  const ok =
    v !== null &&
    typeof v === 'object' &&
    v.version === 1 &&
    Array.isArray(v.wiring) &&
    v.wiring.every((w) => w !== null && typeof w === 'object' && (w.kind === 'shims' || w.kind === 'agent-settings') && typeof w.path === 'string' && Array.isArray(w.repositories) && w.repositories.every((r) => typeof r === 'string'));
  if (!ok) throw new ConfigError('is not offhost\'s record of per-user installs (expected {"version": 1, "wiring": [...]}); fix or remove it — nothing was changed', file);
  return v as Ledger;
}

export function writeLedger(env: NodeJS.ProcessEnv, ledger: Ledger): void {
  const file = ledgerPath(env);
  const wiring = ledger.wiring.filter((w) => w.repositories.length > 0);
  if (wiring.length === 0) {
    // Nothing left to remember: the record goes, and the state folder if offhost left nothing else in it.
    rmSync(file, { force: true });
    return;
  }
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ version: 1, wiring }, null, 2)}\n`);
  renameSync(tmp, file);
}

/** Removes `dir` when it is a folder named `offhost` (offhost's own, under ~/.local/share or ~/.local/state) and empty. */
export function removeEmptyOffhostFolder(dir: string): void {
  if (basename(dir) !== 'offhost') return;
  try {
    rmdirSync(dir);
  } catch {
    /* not empty (audit log, runs, config): it stays */
  }
}

/**
 * Read, change and write the record as one step: under `installs.json.lock` (a directory: mkdir is atomic),
 * so that two inits in two repositories at once both stay recorded. A lock older than 30 s is a crashed
 * process's and is taken over.
 */
export function updateLedger(env: NodeJS.ProcessEnv, change: (ledger: Ledger) => Ledger | null): void {
  const file = ledgerPath(env);
  // Nothing recorded and nothing to record: no folder is made for it.
  if (!existsSync(file) && change(readLedger(env)) === null) return;
  const lock = `${file}.lock`;
  mkdirSync(dirname(file), { recursive: true });
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 30_000) rmdirSync(lock);
      } catch {
        /* released meanwhile */
      }
      if (Date.now() > deadline) throw new ConfigError(`another offhost is changing it (${lock} exists); try again, or remove ${lock} if no offhost is running`, file);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    const next = change(readLedger(env));
    if (next !== null) writeLedger(env, next);
  } finally {
    rmdirSync(lock);
    if (!existsSync(file)) removeEmptyOffhostFolder(dirname(file));
  }
}

/** init: `repository` uses the per-user `path`. Idempotent. */
export function recordUse(env: NodeJS.ProcessEnv, what: { kind: WiringKind; path: string; agent?: string }, repository: string): void {
  const repo = canonical(repository);
  updateLedger(env, (ledger) => {
    let entry = ledger.wiring.find((w) => w.kind === what.kind && w.path === what.path);
    if (!entry) {
      entry = { kind: what.kind, path: what.path, ...(what.agent !== undefined ? { agent: what.agent } : {}), repositories: [] };
      ledger.wiring.push(entry);
    }
    if (entry.repositories.includes(repo)) return null;
    entry.repositories.push(repo);
    return ledger;
  });
}

/** Who else uses one per-user thing, seen from the repository being uninstalled. */
export interface Users {
  /** This repository is on the list. */
  recorded: boolean;
  /** Other repositories on the list whose folder still exists: they still use it. */
  others: string[];
  /** Repositories on the list whose folder is gone (dropped from the record when it is written). */
  gone: string[];
}

export function usersOf(ledger: Ledger, kind: WiringKind, path: string, repository: string, exists: (p: string) => boolean = existsSync): Users {
  const repo = canonical(repository);
  const list = ledger.wiring.find((w) => w.kind === kind && w.path === path)?.repositories ?? [];
  return { recorded: list.includes(repo), others: list.filter((r) => r !== repo && exists(r)), gone: list.filter((r) => r !== repo && !exists(r)) };
}

/**
 * The record after uninstalling `repository`: it is off every list, repositories whose folder is gone are
 * dropped, and the entries of what was removed (`removed`: kind + path) are gone whoever was on them.
 */
export function ledgerWithout(ledger: Ledger, repository: string, removed: { kind: WiringKind; path: string }[], exists: (p: string) => boolean = existsSync): Ledger {
  const repo = canonical(repository);
  return {
    version: 1,
    wiring: ledger.wiring
      .filter((w) => !removed.some((r) => r.kind === w.kind && r.path === w.path))
      .map((w) => ({ ...w, repositories: w.repositories.filter((r) => r !== repo && exists(r)) })),
  };
}

/** The repository a folder is in (its top level), or the folder itself outside git. */
export async function repositoryOf(dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { repoRoot } = await import('../git/staged.js');
  try {
    return canonical(await repoRoot({ cwd: dir, env }));
  } catch {
    return canonical(dir);
  }
}

/** The line init prints after recording a per-user thing. */
export function recordedLine(env: NodeJS.ProcessEnv, path: string, repository: string): string {
  const home = env.HOME;
  const show = (p: string) => (home && p.startsWith(`${home}/`) ? `~/${p.slice(home.length + 1)}` : p);
  return `recorded in ${show(ledgerPath(env))}: ${repository} uses ${show(path)} (per user, shared by every repository that asks for it; \`offhost uninstall\` in a repository takes its share out, and the last one out removes it)`;
}
