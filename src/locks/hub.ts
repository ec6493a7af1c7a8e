// Where a repository's locks are shared (docs/LOCKS.md "Which clones share a lock"). The mode belongs to
// the repository, never to one call:
//
//   user    the default: every clone of the repository on this machine (and this user) goes through one
//           bare repository, the user store `<state dir>/lock-stores/<identity>.git`, as its remote;
//   remote  once the repository's locks are shared through a git remote (config `locks.push`, one
//           `--push`, or the remote already holding refs/offhost/locks), the user store's ref carries a
//           marker (`.offhost/shared-through`) naming that remote, written with the same compare-and-swap
//           as any lock change; from then on every call of every clone on this machine goes through it;
//   clone   a repository with no commit yet has no identity: its locks are its own (reported).
//
// The identity is the repository's first root commit (every clone shares it), kept in
// `<git-common-dir>/offhost/store-id` once found, so later calls do not walk the history.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGit } from '../git/run.js';
import { hasCommitAt, privateDir, type Repo } from '../git/ref-tree.js';
import { stateDir } from '../run/record.js';

/** The path in the user store's tree that says its locks moved to a remote (first line: the URL). */
export const SHARED_THROUGH = '.offhost/shared-through';

export type HubMode = 'user' | 'remote' | 'clone';

export function lockStoresDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'lock-stores');
}

export function sightingsDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'lock-sightings');
}

const cwdOf = (repo: Repo) => ({ cwd: repo.root ?? repo.gitDir, ...(repo.env ? { env: repo.env } : {}) });

/** The repository's identity (its oldest root commit), or null before the first commit. */
export async function repoIdentity(repo: Repo): Promise<string | null> {
  const cache = join(privateDir(repo), 'store-id');
  try {
    const id = readFileSync(cache, 'utf8').trim();
    if (/^[0-9a-f]{40,64}$/.test(id)) return id;
  } catch {
    /* not found yet */
  }
  // No commit yet (the batch process says so without a process of its own): no identity.
  if (!(await hasCommitAt(cwdOf(repo), 'HEAD'))) return null;
  // Oldest first: a root merged in later (a subtree) does not change the identity of older clones.
  const r = await runGit(['rev-list', '--max-parents=0', '--format=%ct %H', '--no-commit-header', 'HEAD'], cwdOf(repo));
  if (r.code !== 0) return null;
  const roots = r.stdout
    .toString('utf8')
    .split('\n')
    .map((l) => l.trim().split(' '))
    .filter((p): p is [string, string] => p.length === 2 && /^[0-9a-f]{40,64}$/.test(p[1]!))
    .sort((a, b) => Number(a[0]) - Number(b[0]) || (a[1] < b[1] ? -1 : 1));
  const id = roots[0]?.[1];
  if (!id) return null;
  try {
    mkdirSync(privateDir(repo), { recursive: true });
    const tmp = `${cache}.${process.pid}.tmp`;
    writeFileSync(tmp, `${id}\n`);
    renameSync(tmp, cache);
  } catch {
    /* read-only git dir: found again next time */
  }
  return id;
}

/** The user store of an identity, created (atomically: made aside, then renamed) when missing. */
export async function ensureUserStore(env: NodeJS.ProcessEnv, identity: string): Promise<string> {
  const dir = lockStoresDir(env);
  const path = join(dir, `${identity}.git`);
  try {
    readFileSync(join(path, 'HEAD'));
    return path;
  } catch {
    /* make it */
  }
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.new-${process.pid}-${Math.random().toString(36).slice(2, 8)}.git`);
  const r = await runGit(['init', '--bare', '--quiet', tmp], { cwd: dir, env });
  if (r.code !== 0) throw new Error(`cannot create the lock store ${path}: ${r.stderr.trim()}`);
  // A reflog for the lock ref even in a bare repository: `lock repair` and people read it.
  await runGit(['config', 'core.logAllRefUpdates', 'always'], { cwd: tmp, env });
  try {
    renameSync(tmp, path);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another process made it first
  }
  return path;
}

/** The URL of a remote of this clone, or null when it has none by that name. */
export async function remoteUrl(repo: Repo, name: string): Promise<string | null> {
  const r = await runGit(['remote', 'get-url', name], cwdOf(repo));
  const url = r.stdout.toString('utf8').trim();
  return r.code === 0 && url ? url : null;
}

/**
 * The remote of this clone to use for locks shared through `url` (named `name` by the clone that started
 * sharing): the remote with that URL; else the remote of that name (repointed since: its new URL is
 * followed); else the URL itself.
 */
export async function remoteNamed(repo: Repo, url: string, name?: string): Promise<string> {
  const r = await runGit(['remote', '-v'], cwdOf(repo));
  const names = new Set<string>();
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [n, u] = line.split(/\s+/);
    if (n && u === url) return n;
    if (n) names.add(n);
  }
  return name && names.has(name) ? name : url;
}

/** The marker's text: the remote's URL and name, and whether the user store's live locks were copied there. */
export function markerText(url: string, name: string, joined: boolean): string {
  return `${url}\nname=${name}\n${joined ? 'joined\n' : ''}`;
}

export function parseMarker(data: Buffer | undefined): { url: string; name?: string; joined: boolean } | null {
  if (!data) return null;
  const lines = data.toString('utf8').split('\n');
  const url = lines[0];
  if (!url) return null;
  const name = lines.find((l) => l.startsWith('name='))?.slice(5);
  return { url, ...(name ? { name } : {}), joined: lines.includes('joined') };
}

/**
 * The last answer to "does the remote hold refs/offhost/locks?" that left the locks in the user store:
 * `<user store>/offhost-remote-probe.json`, `{ url, at, note }` (`note`: the remote could not be asked, and
 * why; null: it holds none of this repository's locks, or only this machine's own history). A positive
 * answer is never kept: it writes the user store's marker, which every later call reads.
 */
interface KeptProbe {
  url: string;
  at: number;
  note: string | null;
}

const probeFile = (userStore: string) => join(userStore, 'offhost-remote-probe.json');

/**
 * The kept answer for `url`, when it is younger than `keepMs` (a clock that went back: none), with its age;
 * else null.
 */
export function keptProbe(userStore: string, url: string, keepMs: number, now: number): { note: string | null; ageMs: number } | null {
  let k: KeptProbe;
  try {
    k = JSON.parse(readFileSync(probeFile(userStore), 'utf8')) as KeptProbe;
  } catch {
    return null; // none yet, or unreadable: ask
  }
  if (typeof k !== 'object' || k === null || k.url !== url || typeof k.at !== 'number' || !(now - k.at >= 0 && now - k.at < keepMs)) return null;
  // Said on stderr again: only offhost's own sentence, without control characters (a file edited by hand).
  const note = typeof k.note === 'string' && k.note.startsWith('could not ask the remote ') ? k.note.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').slice(0, 500) : null;
  return { note: note !== null ? `${note} (asked ${Math.round((now - k.at) / 1000)} s ago)` : null, ageMs: now - k.at };
}

/** Drops the kept answer (the remote holds the locks now: the next call asks it, and joins). */
export function forgetProbe(userStore: string): void {
  rmSync(probeFile(userStore), { force: true });
}

/** Keeps a negative answer (written whole; one that cannot be written only costs the next call a probe). */
export function keepProbe(userStore: string, url: string, now: number, note: string | null): void {
  const f = probeFile(userStore);
  const tmp = `${f}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify({ url, at: now, note } satisfies KeptProbe));
    renameSync(tmp, f);
  } catch {
    rmSync(tmp, { force: true });
  }
}
