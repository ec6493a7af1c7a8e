// The read-only view of the active locks at the paths POLICY R3 names (meta/context/notices/vm-active/,
// .../active/), for people and agents that read the files. The truth is refs/offhost/locks; the view is
// rewritten from it by every offhost lock command and is never committed by the user's git:
// - each path offhost writes is listed in the shared `.git/info/exclude` (add-only: another worktree may
//   still show the file), so `git add -A` / `git commit -a` never pick it up;
// - a path the branch tracks (a lock committed by hand the old way) is never written over;
// - a file offhost did not write (a hand edit, a symlink, a FIFO, a directory) is left alone and reported.
//   "offhost wrote it" = its content is a blob the repository holds (every lock version offhost writes is
//   hashed into the object store before the ref moves): no bookkeeping file that concurrent processes or a
//   crash could get out of step with, and a hand edit (new content) is never mistaken for a view;
// - a process whose snapshot is no longer the ref's tip leaves the view to the newer one;
// - files are written whole (temporary file + rename) and left read-only (0444).
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { splitZ } from '../git/plumbing.js';
import { runGit } from '../git/run.js';
import { catFile } from '../git/batch.js';
import type { Repo } from '../git/ref-tree.js';

export interface ViewProblem {
  path: string;
  why: string;
}

/** The id git gives `data` as a blob. */
const blobId = (data: Buffer) => createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');

/** Which of these blob ids the repository's object store holds (asked of the batch process). */
async function known(repo: Repo, ids: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  if (ids.length === 0) return out;
  const c = { cwd: repo.root ?? repo.gitDir, ...(repo.env ? { env: repo.env } : {}) };
  const fast = await catFile(c, ids).catch(() => null);
  if (fast) {
    fast.objects.forEach((o) => {
      if (o?.type === 'blob') out.add(o.id);
    });
    return out;
  }
  // git died on the way (a corrupt object): its one-shot command answers, as before.
  const r = await runGit(['cat-file', '--batch-check'], { ...c, input: `${ids.join('\n')}\n` });
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [id, type] = line.split(' ');
    if (id && type === 'blob') out.add(id);
  }
  return out;
}

function writeWhole(path: string, data: string | Buffer, mode?: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.offhost-${process.pid}-${Math.random().toString(36).slice(2, 8)}.tmp`;
  try {
    writeFileSync(tmp, data, mode === undefined ? {} : { mode });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** What is at `abs` now: absent, a regular file's hash, or another kind of thing (never opened). */
function inspect(abs: string): { kind: 'absent' } | { kind: 'file'; hash: string } | { kind: 'other'; what: string } {
  let st;
  try {
    st = lstatSync(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return { kind: 'other', what: `cannot be examined (${(err as NodeJS.ErrnoException).code})` };
  }
  if (st.isSymbolicLink()) return { kind: 'other', what: 'is a symbolic link' };
  if (st.isFIFO()) return { kind: 'other', what: 'is a FIFO' };
  if (!st.isFile()) return { kind: 'other', what: 'is not a regular file' };
  if (st.size > 1024 * 1024) return { kind: 'other', what: 'is over 1 MiB' };
  return { kind: 'file', hash: blobId(readFileSync(abs)) };
}

const EXCLUDE_HEAD = '# offhost: read-only views of refs/offhost/locks (docs/LOCKS.md)';

function ensureExcluded(repo: Repo, paths: string[]): void {
  const file = join(repo.commonDir, 'info', 'exclude');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    /* created below */
  }
  const have = new Set(text.split('\n'));
  const add = paths.map((p) => `/${p}`).filter((l) => !have.has(l));
  if (add.length === 0) return;
  const head = have.has(EXCLUDE_HEAD) ? [] : [EXCLUDE_HEAD];
  writeWhole(file, `${text}${text && !text.endsWith('\n') ? '\n' : ''}${[...head, ...add].join('\n')}\n`);
}

/**
 * The last answer of `tracked`, with the index file it was read from: a process that refreshes the view
 * twice (a run: when it takes the lock and when it gives it back) asks git once while the index is the same
 * file. Git writes an index whole, under a new name renamed over the old one, so the same inode, size and
 * times are the same index.
 */
let trackedSeen: { key: string; index: string; paths: Set<string> } | null = null;

function indexIdentity(repo: Repo): string | null {
  try {
    const st = statSync(join(repo.gitDir, 'index'), { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}

/**
 * The same answer kept between processes, beside the index it was read from (`<gitDir>/offhost/view-tracked.json`):
 * the next run asks git only once the index is another file. A record that cannot be read, or names another
 * index, is not used; one that cannot be written only costs the next process a `git ls-files`.
 */
function trackedFile(repo: Repo): string {
  return join(repo.gitDir, 'offhost', 'view-tracked.json');
}

function keptTracked(repo: Repo, key: string, index: string): Set<string> | null {
  try {
    const k = JSON.parse(readFileSync(trackedFile(repo), 'utf8')) as { key?: unknown; index?: unknown; paths?: unknown };
    if (k.key !== key || k.index !== index || !Array.isArray(k.paths) || !k.paths.every((p) => typeof p === 'string')) return null;
    return new Set(k.paths as string[]);
  } catch {
    return null;
  }
}

function keepTracked(repo: Repo, seen: { key: string; index: string; paths: Set<string> }): void {
  try {
    writeWhole(trackedFile(repo), JSON.stringify({ key: seen.key, index: seen.index, paths: [...seen.paths] }));
  } catch {
    /* not kept: the next process asks git */
  }
}

/** For tests: this process forgets its answer, as a new process would start without it. */
export function forgetTrackedInProcess(): void {
  trackedSeen = null;
}

/** Paths under `dirs` that the index tracks (the branch's own files: never written over). */
async function tracked(repo: Repo, dirs: string[]): Promise<Set<string>> {
  if (!repo.root) return new Set();
  const key = [repo.root, repo.gitDir, ...dirs].join('\0');
  const index = indexIdentity(repo);
  if (index !== null && trackedSeen?.key === key && trackedSeen.index === index) return new Set(trackedSeen.paths);
  const kept = index !== null ? keptTracked(repo, key, index) : null;
  if (kept !== null) {
    trackedSeen = { key, index: index!, paths: new Set(kept) };
    return kept;
  }
  const r = await runGit(['ls-files', '-z', '--cached', '--', ...dirs], { cwd: repo.root, ...(repo.env ? { env: repo.env } : {}) });
  const paths = new Set(r.code === 0 ? splitZ(r.stdout) : []);
  // Kept only when the index is the one stat'ed before git read it, and is still that one now.
  trackedSeen = r.code === 0 && index !== null && indexIdentity(repo) === index ? { key, index, paths: new Set(paths) } : null;
  if (trackedSeen) keepTracked(repo, trackedSeen);
  return paths;
}

export function handEditProblem(path: string, what: string): ViewProblem {
  return {
    path,
    why:
      `${what}: offhost keeps locks on refs/offhost/locks and this path is only a read-only view of it, so the change has no effect and was left as it is. ` +
      `Change locks with \`offhost lock ...\`; delete the file to get the view back`,
  };
}

/**
 * Whether the view file of `path` is something other than what offhost wrote (hand edit, symlink, FIFO). A
 * path the branch tracks is a branch lock (legacy.ts), not a view.
 */
export async function viewConflict(repo: Repo, path: string): Promise<ViewProblem | null> {
  if (!repo.root) return null;
  const now = inspect(join(repo.root, path));
  if (now.kind === 'absent') return null;
  // A blob the repository holds is offhost's view or the branch's own file: no conflict either way, and
  // no ls-files to start (the index is asked only when the file is something else).
  if (now.kind === 'file' && (await known(repo, [now.hash])).has(now.hash)) return null;
  if ((await tracked(repo, [path])).has(path)) return null;
  if (now.kind === 'other') return handEditProblem(path, now.what);
  return handEditProblem(path, 'was written or edited by hand');
}

/**
 * Makes the view match `active` (repository-relative path -> file bytes) for the folders `dirs`. Never
 * throws for the view itself: problems (a hand edit, a read-only or full disk) are returned.
 */
export async function refreshView(repo: Repo, dirs: string[], active: Map<string, Buffer>): Promise<ViewProblem[]> {
  if (!repo.root) return [];
  const root = repo.root;
  const problems: ViewProblem[] = [];
  try {
    const own = await tracked(repo, dirs);
    for (const [p] of active) if (own.has(p)) problems.push({ path: p, why: 'is tracked by the checked-out branch (a lock committed by hand): not shown in the view; `offhost lock gc` migrates it' });
    const want = [...active].filter(([p]) => !own.has(p));
    if (want.length) ensureExcluded(repo, want.map(([p]) => p));
    // What is there now: every lock-*.md in the view folders that the branch does not track.
    const present = new Map<string, ReturnType<typeof inspect>>();
    for (const d of dirs) {
      let names: string[] = [];
      try {
        names = readdirSync(join(root, d));
      } catch {
        continue;
      }
      for (const n of names) if (/^lock-.+\.md$/.test(n) && !own.has(`${d}/${n}`)) present.set(`${d}/${n}`, inspect(join(root, d, n)));
    }
    const ids = [...present.values()].flatMap((x) => (x.kind === 'file' ? [x.hash] : []));
    const ours = await known(repo, ids);
    for (const [p, data] of want) {
      const now = present.get(p) ?? { kind: 'absent' as const };
      if (now.kind === 'file' && now.hash === blobId(data)) continue;
      if (now.kind === 'other' || (now.kind === 'file' && !ours.has(now.hash))) {
        problems.push(handEditProblem(p, now.kind === 'other' ? now.what : 'was written or edited by hand'));
        continue;
      }
      writeWhole(join(root, p), data, 0o444);
    }
    for (const [p, now] of present) {
      if (active.has(p)) continue;
      if (now.kind === 'file' && ours.has(now.hash)) {
        chmodSync(join(root, p), 0o644);
        unlinkSync(join(root, p));
      } else if (now.kind === 'other' || now.kind === 'file') {
        problems.push(handEditProblem(p, now.kind === 'other' ? now.what : 'is not a lock on the lock ref (written by hand?)'));
      }
    }
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    problems.push({ path: e.path ?? dirs[0] ?? '.', why: `the view could not be updated (${e.code ?? e.message}); the lock ref is correct, \`offhost lock status\` retries` });
  }
  return problems;
}
