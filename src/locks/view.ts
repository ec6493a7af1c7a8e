// The read-only view of the active locks at the paths POLICY R3 names (meta/context/notices/vm-active/,
// .../active/), for people and agents that read the files. The truth is refs/offhost/locks; the view is
// rewritten from it by every offhost lock command and is never committed by the user's git:
// - each path offhost writes is listed in the shared `.git/info/exclude` (add-only: another worktree may
//   still show the file), so `git add -A` / `git commit -a` never pick it up;
// - a path the branch tracks (a lock committed by hand the old way) is never written over;
// - a file offhost did not write (a hand edit, a symlink, a FIFO, a directory) is left alone and reported:
//   the manifest (`<git-dir>/offhost/view.json`) holds the hashes of what offhost wrote; it is updated
//   before a file is written, so a crash between the two is not mistaken for a hand edit;
// - files are written whole (temporary file + rename) and left read-only (0444).
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { splitZ } from '../git/plumbing.js';
import { runGit } from '../git/run.js';
import type { Repo } from '../git/ref-tree.js';

export interface ViewProblem {
  path: string;
  why: string;
}

type Manifest = Record<string, string[]>;

const sha = (b: Buffer | string) => createHash('sha1').update(b).digest('hex');

function manifestPath(repo: Repo): string {
  return join(repo.gitDir, 'offhost', 'view.json');
}

function readManifest(repo: Repo): Manifest {
  try {
    const m = JSON.parse(readFileSync(manifestPath(repo), 'utf8')) as unknown;
    return m && typeof m === 'object' ? (m as Manifest) : {};
  } catch {
    return {};
  }
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

function saveManifest(repo: Repo, m: Manifest): void {
  // Several offhost processes may refresh the view at once, each from the manifest it read earlier: a hash
  // another one recorded for the file that is on disk now is kept (else the next reader would take that file
  // for a hand edit); entries of files that are gone are dropped.
  const fresh = readManifest(repo);
  const out: Manifest = {};
  for (const p of new Set([...Object.keys(m), ...Object.keys(fresh)])) {
    const mine = m[p] ?? [];
    const now = repo.root ? inspect(join(repo.root, p)) : ({ kind: 'absent' } as const);
    const disk = now.kind === 'file' ? now.hash : null;
    const theirs = (fresh[p] ?? []).filter((h) => h === disk && !mine.includes(h));
    const all = [...mine, ...theirs];
    if (all.length) out[p] = all;
  }
  writeWhole(manifestPath(repo), `${JSON.stringify(out, null, 1)}\n`);
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
  return { kind: 'file', hash: sha(readFileSync(abs)) };
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

/** Paths under `dirs` that the index tracks (the branch's own files: never written over). */
async function tracked(repo: Repo, dirs: string[]): Promise<Set<string>> {
  if (!repo.root) return new Set();
  const r = await runGit(['ls-files', '-z', '--cached', '--', ...dirs], { cwd: repo.root, ...(repo.env ? { env: repo.env } : {}) });
  return new Set(r.code === 0 ? splitZ(r.stdout) : []);
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
  if ((await tracked(repo, [path])).has(path)) return null;
  if (now.kind === 'other') return handEditProblem(path, now.what);
  const known = readManifest(repo)[path];
  return known && known.includes(now.hash) ? null : handEditProblem(path, 'was written or edited by hand');
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
    const manifest = readManifest(repo);
    const own = await tracked(repo, dirs);
    const want = [...active].filter(([p]) => !own.has(p));
    for (const [p] of active) if (own.has(p)) problems.push({ path: p, why: 'is tracked by the checked-out branch (a lock committed by hand): not shown in the view; `offhost lock gc` migrates it' });
    if (want.length) ensureExcluded(repo, want.map(([p]) => p));
    let changed = false;
    for (const [p, data] of want) {
      const h = sha(data);
      const abs = join(root, p);
      const now = inspect(abs);
      if (now.kind === 'file' && now.hash === h) {
        if (!(manifest[p]?.length === 1 && manifest[p]![0] === h)) ((manifest[p] = [h]), (changed = true));
        continue;
      }
      if (now.kind === 'other' || (now.kind === 'file' && !(manifest[p] ?? []).includes(now.hash))) {
        problems.push(handEditProblem(p, now.kind === 'other' ? now.what : 'was written or edited by hand'));
        continue;
      }
      manifest[p] = [...new Set([...(manifest[p] ?? []), h])];
      saveManifest(repo, manifest);
      writeWhole(abs, data, 0o444);
      manifest[p] = [h];
      changed = true;
    }
    for (const p of Object.keys(manifest)) {
      if (active.has(p) || !dirs.some((d) => p.startsWith(`${d}/`))) continue;
      const now = inspect(join(root, p));
      if (now.kind === 'file' && manifest[p]!.includes(now.hash)) {
        chmodSync(join(root, p), 0o644);
        unlinkSync(join(root, p));
      } else if (now.kind !== 'absent') {
        problems.push(handEditProblem(p, now.kind === 'other' ? now.what : 'was edited by hand after its lock was released'));
        continue;
      }
      delete manifest[p];
      changed = true;
    }
    if (changed) saveManifest(repo, manifest);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    problems.push({ path: e.path ?? dirs[0] ?? '.', why: `the view could not be updated (${e.code ?? e.message}); the lock ref is correct, \`offhost lock status\` retries` });
  }
  return problems;
}
