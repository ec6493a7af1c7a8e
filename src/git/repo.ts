// The few git operations offhost needs, over simple-git.
//
// Rules this module keeps, because several sessions (humans and agents) share one checkout:
// - a commit contains only the paths it is given (`git commit --only -- <paths>`): whatever the user has
//   staged or left unstaged in other files stays exactly as it was;
// - a busy index (`.git/index.lock`, or a ref lock) is retried with a bounded backoff, never reported as
//   success and never "fixed" by deleting the lock;
// - nothing here resets, stashes, checks out or rebases the user's working tree. Commits for a remote are
//   built in a private temporary index on top of the remote tip (plumbing), so the user's index is never
//   used for them.
import { simpleGit, type SimpleGit } from 'simple-git';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { GitError } from '../errors.js';

/** Environment variables passed through to git (simple-git strips the other GIT_* ones). */
const PASS_ENV = [
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
  'GIT_TERMINAL_PROMPT',
  'GIT_CONFIG_NOSYSTEM',
];
/** Set only explicitly by this module (never inherited: inside a git hook they point at git's own files). */
const OWN_ENV = ['GIT_INDEX_FILE'];
const GUARDED = new Set([
  'editor',
  'visual',
  'pager',
  'prefix',
  'ssh_askpass',
]);

function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    const low = k.toLowerCase();
    if (low.startsWith('git_') && !PASS_ENV.includes(k)) continue;
    if (GUARDED.has(low)) continue;
    out[k] = v;
  }
  return out;
}

export interface GitRunOptions {
  /** Extra environment (only GIT_INDEX_FILE and the PASS_ENV names are allowed). */
  env?: Record<string, string>;
  /** Retry while the index or a ref is locked by another git process (default true). */
  retryLocked?: boolean;
  /** Resolve with the exit status and output instead of throwing. */
  allowFail?: boolean;
}

export interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Upper bound on waiting for a busy index, in ms (OFFHOST_GIT_LOCK_WAIT_MS overrides). */
export function lockWaitLimitMs(): number {
  const v = Number(process.env.OFFHOST_GIT_LOCK_WAIT_MS);
  return Number.isFinite(v) && v >= 0 ? v : 20_000;
}

// A busy lock file (index.lock, a ref's .lock). Not "cannot lock ref ...: is at X but expected Y", which is a
// lost compare-and-swap, not a busy lock.
const LOCKED_RE = /index\.lock|\.lock': File exists|Another git process seems to be running/i;

export function isLockedError(stderr: string): boolean {
  return LOCKED_RE.test(stderr);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function client(root: string, env: Record<string, string> | undefined): SimpleGit {
  const git = simpleGit({
    baseDir: root,
    trimmed: false,
    maxConcurrentProcesses: 1,
    allowEnvironment: [...PASS_ENV, ...OWN_ENV],
  });
  git.env({ ...baseEnv(), ...(env ?? {}) });
  return git;
}

async function once(root: string, args: string[], env: Record<string, string> | undefined): Promise<GitResult> {
  try {
    const stdout = await client(root, env).raw(args);
    return { ok: true, stdout, stderr: '' };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    return { ok: false, stdout: '', stderr: msg };
  }
}

/** Runs `git <args>` in `root`, retrying a busy index/ref lock with backoff (bounded). */
export async function git(root: string, args: string[], opts: GitRunOptions = {}): Promise<GitResult> {
  const limit = lockWaitLimitMs();
  const start = Date.now();
  let delay = 25;
  for (;;) {
    const r = await once(root, args, opts.env);
    if (r.ok) return r;
    if (opts.retryLocked !== false && isLockedError(r.stderr) && Date.now() - start < limit) {
      await sleep(Math.min(delay, Math.max(1, limit - (Date.now() - start))));
      delay = Math.min(delay * 2, 1000);
      continue;
    }
    if (opts.allowFail) return r;
    if (isLockedError(r.stderr)) {
      throw new GitError(
        `git ${args[0]}: the git index is busy (another git process holds a lock for over ${Math.round(limit / 1000)} s); ` +
          `nothing was committed. If no git process is running, remove .git/index.lock and retry.\n${r.stderr.trim()}`,
      );
    }
    throw new GitError(`git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  }
}

/** Like git() but returns trimmed stdout. */
export async function gitOut(root: string, args: string[], opts: GitRunOptions = {}): Promise<string> {
  return (await git(root, args, opts)).stdout.trim();
}

export interface Repo {
  /** Absolute path of the working tree's top level. */
  root: string;
  /** Absolute path of this working tree's git directory (.git, or .git/worktrees/<name>). */
  gitDir: string;
}

/** The repository that holds `cwd`; GitError when it is not inside one. */
export async function openRepo(cwd: string): Promise<Repo> {
  const r = await git(cwd, ['rev-parse', '--show-toplevel', '--git-dir'], { allowFail: true, retryLocked: false });
  if (!r.ok) throw new GitError(`${cwd} is not inside a git repository (lock files live in the repository): ${r.stderr.trim()}`);
  const [top, gd] = r.stdout.split('\n').map((s) => s.trim());
  if (!top || !gd) throw new GitError(`${cwd}: cannot find the repository root`);
  return { root: top, gitDir: isAbsolute(gd) ? gd : resolve(cwd, gd) };
}

/** HEAD's commit id, or null in a repository with no commit yet. */
export async function headSha(root: string): Promise<string | null> {
  const r = await git(root, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { allowFail: true });
  const s = r.stdout.trim();
  return r.ok && s ? s : null;
}

/** Content of `path` (relative to the root) at `rev` (HEAD, a sha, origin/main), or null when absent. */
export async function readAt(root: string, rev: string, path: string): Promise<string | null> {
  const r = await git(root, ['cat-file', '-p', `${rev}:${path}`], { allowFail: true });
  return r.ok ? r.stdout : null;
}

/** Whether `path` exists in the tree of `rev`. */
export async function existsAt(root: string, rev: string, path: string): Promise<boolean> {
  const r = await git(root, ['ls-tree', '--name-only', rev, '--', path], { allowFail: true });
  return r.ok && r.stdout.trim() !== '';
}

/** Names of the files under `dir` in the tree of `rev` (relative to the root). */
export async function listAt(root: string, rev: string, dir: string): Promise<string[]> {
  const r = await git(root, ['ls-tree', '--name-only', `${rev}:${dir}`], { allowFail: true });
  if (!r.ok) return [];
  return r.stdout
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((n) => `${dir.replace(/\/$/, '')}/${n}`);
}

/** One index entry: `mode sha stage\tpath`, as `git ls-files -s` prints it. */
export interface IndexEntry {
  mode: string;
  sha: string;
  path: string;
}

/** The index entries of exactly these paths (absent paths are simply missing from the result). */
export async function indexEntries(root: string, paths: string[]): Promise<IndexEntry[]> {
  if (paths.length === 0) return [];
  const out = await gitOut(root, ['ls-files', '-s', '--', ...paths]);
  const entries: IndexEntry[] = [];
  for (const line of out.split('\n')) {
    const m = /^(\d+) ([0-9a-f]+) (\d)\t(.*)$/.exec(line);
    if (m && m[3] === '0') entries.push({ mode: m[1]!, sha: m[2]!, path: m[4]! });
  }
  return entries;
}

/**
 * Puts the index entries of `paths` back to `saved` (a path missing from `saved` is removed from the
 * index). Touches no other index entry and no working-tree file.
 */
export async function restoreIndexEntries(root: string, paths: string[], saved: IndexEntry[]): Promise<void> {
  const keep = new Map(saved.map((e) => [e.path, e]));
  const remove = paths.filter((p) => !keep.has(p));
  if (remove.length) await git(root, ['update-index', '--force-remove', '--', ...remove]);
  for (const e of saved) {
    if (!paths.includes(e.path)) continue;
    await git(root, ['update-index', '--add', '--cacheinfo', `${e.mode},${e.sha},${e.path}`]);
  }
}

/** Index entries of `paths` as they are in the tree of `rev`. */
export async function treeEntries(root: string, rev: string, paths: string[]): Promise<IndexEntry[]> {
  if (paths.length === 0) return [];
  const r = await git(root, ['ls-tree', '-r', '--full-tree', rev, '--', ...paths], { allowFail: true });
  if (!r.ok) return [];
  const entries: IndexEntry[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^(\d+) blob ([0-9a-f]+)\t(.*)$/.exec(line);
    if (m) entries.push({ mode: m[1]!, sha: m[2]!, path: m[3]! });
  }
  return entries;
}

export interface CommitOptions {
  /** Run the repository's commit hooks (default false: offhost validates its own lock transitions). */
  verify?: boolean;
}

/**
 * Commits exactly `paths` (relative to the root) as they are in the working tree (a missing file is a
 * deletion), and nothing else: other staged and unstaged changes stay as they were. Returns the new commit.
 * On failure the index entries of `paths` are put back as they were and a GitError is thrown; the working
 * tree is left to the caller (who rolls its own files back).
 */
export async function commitPaths(repo: Repo, paths: string[], message: string, opts: CommitOptions = {}): Promise<string> {
  if (paths.length === 0) throw new GitError('nothing to commit: no paths given');
  const saved = await indexEntries(repo.root, paths);
  try {
    // Make new files known to git (a pathspec of `commit --only` must match something git knows) and
    // record deletions; only these paths.
    await git(repo.root, ['update-index', '--add', '--remove', '--', ...paths]);
    const args = ['commit', '--only', '--quiet', '--allow-empty-message', '-m', message];
    if (!opts.verify) args.push('--no-verify');
    args.push('--', ...paths);
    await git(repo.root, args);
  } catch (err) {
    await restoreIndexEntries(repo.root, paths, saved).catch(() => undefined);
    throw err instanceof GitError ? err : new GitError(String(err));
  }
  const sha = await headSha(repo.root);
  if (!sha) throw new GitError('commit reported success but HEAD has no commit');
  return sha;
}

/** The commit's parent, subject and the paths it changed. */
export async function commitInfo(root: string, sha: string): Promise<{ parent: string | null; subject: string }> {
  const out = await gitOut(root, ['log', '-1', '--format=%P%n%s', sha]);
  const [parents, subject] = out.split('\n');
  return { parent: parents?.split(' ')[0] || null, subject: subject ?? '' };
}

/** Current branch name, or null on a detached HEAD. */
export async function currentBranch(root: string): Promise<string | null> {
  const r = await git(root, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { allowFail: true });
  const s = r.stdout.trim();
  return r.ok && s ? s : null;
}

/** Where pushes go: the branch's upstream when it has one, else `origin` and the branch's own name. */
export async function pushTarget(root: string, remote?: string, branch?: string): Promise<{ remote: string; branch: string }> {
  const local = await currentBranch(root);
  let upRemote: string | undefined;
  let upBranch: string | undefined;
  if (local) {
    const r = await git(root, ['rev-parse', '--abbrev-ref', '--symbolic-full-name', `${local}@{upstream}`], { allowFail: true });
    const up = r.ok ? r.stdout.trim() : '';
    const slash = up.indexOf('/');
    if (slash > 0) {
      upRemote = up.slice(0, slash);
      upBranch = up.slice(slash + 1);
    }
  }
  const rem = remote ?? upRemote ?? 'origin';
  const br = branch ?? (rem === upRemote ? upBranch : undefined) ?? local;
  if (!br) throw new GitError('cannot push a lock from a detached HEAD without a branch (configure locks.branch)');
  return { remote: rem, branch: br };
}

/**
 * Fetches `branch` from `remote` into refs/remotes/<remote>/<branch> and returns the remote tip, or null
 * when the remote has no such branch yet.
 */
export async function fetchTip(root: string, remote: string, branch: string): Promise<string | null> {
  const ref = `refs/remotes/${remote}/${branch}`;
  const r = await git(root, ['fetch', '--quiet', '--no-tags', remote, `+refs/heads/${branch}:${ref}`], { allowFail: true });
  if (!r.ok) {
    if (/couldn't find remote ref/i.test(r.stderr)) return null;
    throw new GitError(`git fetch ${remote} ${branch} failed: ${r.stderr.trim()}`);
  }
  return gitOut(root, ['rev-parse', '--verify', ref]);
}

/**
 * Builds a commit on top of `base` (or a root commit when null) whose tree is base's tree with `changes`
 * applied (content, or null for a deletion), in a private temporary index. The user's index and working
 * tree are not touched.
 */
export async function commitOnto(
  root: string,
  base: string | null,
  changes: Map<string, string | null>,
  message: string,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-index-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    if (base) await git(root, ['read-tree', base], { env, retryLocked: false });
    else await git(root, ['read-tree', '--empty'], { env, retryLocked: false });
    for (const [path, content] of changes) {
      if (content === null) {
        await git(root, ['update-index', '--force-remove', '--', path], { env, retryLocked: false });
      } else {
        const sha = await hashObject(root, content);
        await git(root, ['update-index', '--add', '--cacheinfo', `100644,${sha},${path}`], { env, retryLocked: false });
      }
    }
    const tree = await gitOut(root, ['write-tree'], { env, retryLocked: false });
    const args = ['commit-tree', tree, '-m', message];
    if (base) args.splice(2, 0, '-p', base);
    return await gitOut(root, args, { env, retryLocked: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function hashObject(root: string, content: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'offhost-blob-'));
  try {
    const f = join(dir, 'blob');
    writeFileSync(f, content);
    return await gitOut(root, ['hash-object', '-w', '--', f]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Pushes `sha` to `remote`'s `branch` as a fast-forward only (a compare-and-swap on the remote: it
 * succeeds only if the remote tip is still the commit `sha` was built on). 'rejected' when someone else
 * moved the branch first.
 */
export async function pushFastForward(root: string, remote: string, sha: string, branch: string): Promise<'ok' | 'rejected'> {
  const r = await git(root, ['push', '--quiet', '--porcelain', remote, `${sha}:refs/heads/${branch}`], { allowFail: true, retryLocked: false });
  if (r.ok) {
    // Keep the remote-tracking ref in step (git does it for configured refspecs; make sure).
    await git(root, ['update-ref', `refs/remotes/${remote}/${branch}`, sha], { allowFail: true });
    return 'ok';
  }
  if (/rejected|non-fast-forward|fetch first|stale info|failed to update ref|cannot lock ref/i.test(r.stderr)) return 'rejected';
  throw new GitError(`git push ${remote} ${branch} failed: ${r.stderr.trim()}`);
}

/**
 * Moves the current branch from `from` back to `to` only if it still points at `from` (compare-and-swap);
 * false when HEAD has moved on (someone committed after `from`).
 */
export async function moveHeadIfAt(root: string, from: string, to: string, reason: string): Promise<boolean> {
  const r = await git(root, ['update-ref', '-m', reason, 'HEAD', to, from], { allowFail: true });
  return r.ok;
}
