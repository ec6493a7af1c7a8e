// A ref whose commits hold a small tree of files (offhost's lock history: refs/offhost/locks), read and
// changed with plumbing only. Nothing here reads or writes HEAD, the user's index or the working tree:
// - read: through the one `cat-file --batch` this process keeps per repository (./batch.ts): refs, trees
//   walked from the root as `ls-tree -r` walks them, blobs; anything odd (a tree that is missing or does
//   not parse, git dying on a corrupt object) is read again by git's own one-shot commands, whose words
//   the error then carries, exactly as before;
// - change: the blobs, trees and commit written by offhost as loose objects (./loose-objects.ts: the trees
//   along the changed paths read through the batch process, the identity from the first commit, which is
//   git's `commit-tree`), else, where that
//   is not exactly git's (no base commit, GIT_*_DATE set, a path through a file), by git: blobs by
//   `hash-object -w --stdin`, the tree by a private index file in the git directory (`GIT_INDEX_FILE`,
//   removed afterwards; a crashed process's file is removed by the next one), a commit by `commit-tree`;
//   the ref is moved by `update-ref REF NEW OLD` either way, a compare-and-swap: it fails when another
//   writer moved the ref first, and then the caller re-reads and re-decides;
// - across clones: `ls-remote` says where the remote's ref is, `fetch` brings its objects, and `push
//   --force-with-lease=REF:OLD` is the same compare-and-swap on the remote.
import { mkdirSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { GitError } from '../errors.js';
import { catFileInput, parseCatFileBatch, parseLsTree, ZERO_SHA, type TreeEntry } from './plumbing.js';
import { gitOk, gitText, runGit, type GitCall } from './run.js';
import { catFile } from './batch.js';
import { moveWithWriter, prepareRefWriter } from './ref-writer.js';
import { commitObjects, identsOf, knownIdents, parseTree, rememberIdents, scanTree, writeLoose, type LooseObject, type RawTree } from './loose-objects.js';

export interface Repo {
  /** The working tree's top level (null for a bare repository). */
  root: string | null;
  /** This working tree's git directory (.git, or .git/worktrees/<name>). */
  gitDir: string;
  /** The directory shared by all worktrees (refs, objects, info/exclude). */
  commonDir: string;
  env?: NodeJS.ProcessEnv;
}

/** The repository holding `cwd`; GitError when it is not inside one. */
export async function openRepoAt(cwd: string, env?: NodeJS.ProcessEnv): Promise<Repo> {
  const r = await runGit(['rev-parse', '--is-bare-repository', '--absolute-git-dir', '--git-common-dir', '--show-toplevel'], { cwd, ...(env ? { env } : {}) });
  if (r.code !== 0) throw new GitError(`${cwd} is not inside a git repository: ${r.stderr.trim().split('\n')[0] ?? ''}`);
  const [bare, gitDir, common, top] = r.stdout.toString('utf8').split('\n').map((s) => s.trim());
  if (!gitDir || !common) throw new GitError(`${cwd}: git did not say where the repository is`);
  const commonDir = isAbsolute(common) ? common : resolve(cwd, common);
  return { root: bare === 'true' ? null : top || null, gitDir, commonDir, ...(env ? { env } : {}) };
}

function call(repo: Repo, more: Partial<GitCall> = {}): GitCall {
  return { cwd: repo.root ?? repo.gitDir, ...(repo.env ? { env: repo.env } : {}), ...more };
}

/** The commit a ref points at, or null when the ref does not exist (or is broken: see inspectRef). */
export async function readRef(repo: Repo, ref: string): Promise<string | null> {
  const fast = await catFile(call(repo), [`${ref}^{commit}`]).catch(() => null);
  if (fast) {
    const o = fast.objects[0];
    return o && o.type === 'commit' ? o.id : null;
  }
  // git died on the way (a corrupt object): its one-shot command answers, as before.
  const r = await runGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], call(repo));
  const s = r.stdout.toString('utf8').trim();
  return r.code === 0 && s ? s : null;
}

/** What a ref is: absent, a commit, or broken (and why, for a person). */
export type RefState = ({ state: 'absent' } | { state: 'commit'; sha: string } | { state: 'broken'; why: string; sha?: string }) & { has?: boolean[] };

/**
 * Tells an absent ref from a broken one, which readRef cannot: a ref file that is not an object id, an id
 * whose object is missing, or an object that is not a commit (a blob, a tree, a tag of one). `also`: other
 * objects to look up in the same call (`has` says which exist).
 */
export async function inspectRef(repo: Repo, ref: string, also: string[] = []): Promise<RefState> {
  // The common case in the batch process: the ref names a commit whose tree is here, and git warned of no
  // broken ref on the way (a garbage ref file makes git try the ref's other spellings, refs/heads/<ref>...).
  const fast = await catFile(call(repo), [ref, `${ref}^{tree}`, ...also]).catch(() => null);
  const [head, tree, ...rest] = fast?.objects ?? [];
  const has = also.map((_, i) => Boolean(rest[i]));
  const warnings = fast?.warnings ?? null;
  if (head?.type === 'commit' && tree?.type === 'tree' && warnings !== null && !/broken ref/i.test(warnings)) return { state: 'commit', sha: head.id, has };
  const r = await runGit(['rev-parse', '--verify', ref], call(repo));
  const sha = r.stdout.toString('utf8').trim();
  if (r.code !== 0 || !sha) {
    if (/ignoring broken ref|reference broken|bad ref/i.test(`${r.stderr}${warnings ?? ''}`)) return { state: 'broken', why: `${ref} holds something that is not an object id (a garbage ref file)` };
    return { state: 'absent', has };
  }
  return { ...(await objectState(repo, ref, sha)), has };
}

/** The state of the object a ref names (`sha`): a commit whose tree is there, or broken. */
export async function objectState(repo: Repo, ref: string, sha: string): Promise<RefState> {
  if (/^0+$/.test(sha)) return { state: 'broken', why: `${ref} holds the null object id (a garbage ref file)` };
  const fast = await catFile(call(repo), [sha, `${sha}^{tree}`]).catch(() => null);
  if (!fast) return objectStateByGit(repo, ref, sha);
  const [obj, tree] = fast.objects;
  if (!obj) return { state: 'broken', why: `${ref} points at ${sha}, an object this repository does not have (missing object)`, sha };
  if (obj.type !== 'commit') return { state: 'broken', why: `${ref} points at ${sha}, which is a ${obj.type}, not a commit`, sha };
  if (!tree) return { state: 'broken', why: `${ref} points at commit ${sha}, whose tree is missing (missing object)`, sha };
  return { state: 'commit', sha };
}

/** objectState by git's one-shot commands (when the batch process died on a corrupt object): their answer stands. */
async function objectStateByGit(repo: Repo, ref: string, sha: string): Promise<RefState> {
  const t = await runGit(['cat-file', '-t', sha], call(repo));
  const type = t.stdout.toString('utf8').trim();
  if (t.code !== 0) return { state: 'broken', why: `${ref} points at ${sha}, an object this repository does not have (missing object)`, sha };
  if (type !== 'commit') return { state: 'broken', why: `${ref} points at ${sha}, which is a ${type}, not a commit`, sha };
  const tree = await runGit(['cat-file', '-e', `${sha}^{tree}`], call(repo));
  if (tree.code !== 0) return { state: 'broken', why: `${ref} points at commit ${sha}, whose tree is missing (missing object)`, sha };
  return { state: 'commit', sha };
}

export interface TreeFile {
  path: string;
  mode: string;
  sha: string;
  /** The bytes (only for files under the directories asked to be read). */
  data: Buffer;
}

/** git's canon_mode (tree-walk.h): what `ls-tree` shows for a tree entry's mode; null when it is not octal. */
function canonMode(raw: string): number | null {
  if (!/^[0-7]+$/.test(raw)) return null;
  const m = parseInt(raw, 8);
  const fmt = m & 0o170000;
  if (fmt === 0o100000) return 0o100000 | (m & 0o100 ? 0o755 : 0o644);
  if (fmt === 0o120000) return 0o120000;
  if (fmt === 0o040000) return 0o040000;
  return 0o160000;
}

/**
 * `ls-tree -r -z --full-tree <treeish> -- <specs>` read through the batch process: the tree walked from
 * the root in git's order, into the folders of `specs` only. The entries strictly under a spec (blobs,
 * symbolic links, gitlinks; folders are walked, not listed), or null when anything is odd (a tree missing,
 * one that does not parse, git failing): the caller then asks ls-tree itself.
 */
export async function walkTree(repo: Repo, treeish: string, specs: string[], noTree?: 'empty'): Promise<TreeEntry[] | null> {
  const c = call(repo);
  const root = (await catFile(c, [`${treeish}^{tree}`])).objects[0];
  if (!root && noTree === 'empty') return [];
  if (!root || root.type !== 'tree') return null;
  const idLen = root.id.length / 2;
  const out: TreeEntry[] = [];
  const visit = async (dir: string, body: Buffer): Promise<boolean> => {
    let entries: ReturnType<typeof parseTree>;
    try {
      entries = parseTree(body, idLen);
    } catch {
      return false;
    }
    const rows: { path: string; mode: number; sha: string; into: boolean }[] = [];
    for (const e of entries) {
      const mode = canonMode(e.mode);
      const name = e.name.toString('utf8');
      if (mode === null || name === '' || name.includes('/')) return false;
      const path = dir ? `${dir}/${name}` : name;
      const inside = specs.some((s) => path.startsWith(`${s}/`));
      if (mode === 0o040000) {
        if (inside || specs.some((s) => s === path || s.startsWith(`${path}/`))) rows.push({ path, mode, sha: e.id.toString('hex'), into: true });
      } else if (inside) rows.push({ path, mode, sha: e.id.toString('hex'), into: false });
    }
    const subtrees = rows.filter((r) => r.into);
    const got = subtrees.length ? (await catFile(c, subtrees.map((r) => r.sha))).objects : [];
    let k = 0;
    for (const r of rows) {
      if (!r.into) {
        out.push({ mode: r.mode.toString(8).padStart(6, '0'), type: r.mode === 0o160000 ? 'commit' : 'blob', sha: r.sha, path: r.path });
        continue;
      }
      const t = got[k++];
      if (!t || t.type !== 'tree' || !(await visit(r.path, t.data))) return false;
    }
    return true;
  };
  return (await visit('', root.data)) ? out : null;
}

/**
 * The entries strictly under `specs` in the tree of `treeish`, as `git ls-tree -r -z --full-tree` lists
 * them. Read through the batch process; when that finds anything odd, ls-tree itself answers (and its
 * error, git's words, is what the caller reports). `noTree: 'empty'`: a treeish that names no tree (HEAD
 * before the first commit) lists nothing, where ls-tree would fail.
 */
export async function listTree(repo: Repo, treeish: string, specs: string[], opts: { noTree?: 'empty' } = {}): Promise<TreeEntry[]> {
  const fast = await walkTree(repo, treeish, specs, opts.noTree).catch(() => null);
  if (fast) return fast;
  const under = (p: string) => specs.some((d) => p.startsWith(`${d}/`));
  return parseLsTree(await gitOk(['ls-tree', '-r', '-z', '--full-tree', treeish, '--', ...specs], call(repo))).filter((e) => under(e.path));
}

/** The objects named, through the batch process; git's one-shot `cat-file --batch` when that fails (its error is git's). */
async function readNamed(repo: Repo, names: string[]): Promise<Map<string, { type: string; data: Buffer }>> {
  const { asked, input } = catFileInput(names);
  const out = new Map<string, { type: string; data: Buffer }>();
  const fast = await catFile(call(repo), asked).catch(() => null);
  if (!fast) return parseCatFileBatch(await gitOk(['cat-file', '--batch'], call(repo, { input })), asked);
  asked.forEach((n, i) => {
    const o = fast.objects[i];
    if (o) out.set(n, { type: o.type, data: o.data });
  });
  return out;
}

/**
 * The paths in the folder `dir` of `commit` whose names start with `prefix` and that are not folders or
 * gitlinks (the files readTree's `names` would list there), found by scanning the folder's tree object
 * as bytes: a folder of thousands of archived locks costs no string or object per entry. An empty set
 * when the folder does not exist; null when anything is odd (the caller lists the folder as before).
 */
export async function namesStartingWith(repo: Repo, commit: string, dir: string, prefix: string): Promise<Set<string> | null> {
  const got = await catFile(call(repo), [`${commit}:${dir}`]).catch(() => null);
  if (!got) return null;
  const tree = got.objects[0];
  const out = new Set<string>();
  if (tree === null || tree === undefined) return out;
  if (tree.type !== 'tree') return null;
  let t: RawTree;
  try {
    t = scanTree(tree.data, tree.id.length / 2);
  } catch {
    return null;
  }
  const want = Buffer.from(prefix, 'utf8');
  for (let k = 0; k < t.count; k++) {
    const s = t.nameStart[k]!;
    const e = t.nameEnd[k]!;
    if (e - s < want.length || t.body.compare(want, 0, want.length, s, s + want.length) !== 0) continue;
    if (t.kind[k] === 0o100000 || t.kind[k] === 0o120000) out.add(`${dir}/${t.body.toString('utf8', s, e)}`);
  }
  return out;
}

/**
 * Files under `dirs` in the tree of `commit` (every level below), with their bytes; `names` lists other
 * directories whose file names (not contents) are wanted.
 */
export async function readTree(
  repo: Repo,
  commit: string | null,
  dirs: string[],
  names: string[] = [],
): Promise<{ files: Map<string, TreeFile>; names: Set<string>; odd: TreeEntry[]; missing: string[] }> {
  const files = new Map<string, TreeFile>();
  const listed = new Set<string>();
  const odd: TreeEntry[] = [];
  const missing: string[] = [];
  if (!commit) return { files, names: listed, odd, missing };
  const under = (p: string, ds: string[]) => ds.some((d) => p.startsWith(`${d}/`));
  const entries = await listTree(repo, commit, [...dirs, ...names]);
  // A gitlink (a commit entry) or anything but a regular file where lock files live is reported, never skipped.
  for (const e of entries) if (under(e.path, dirs) && (e.type !== 'blob' || (e.mode !== '100644' && e.mode !== '100755'))) odd.push(e);
  const wanted = entries.filter((e) => e.type === 'blob' && under(e.path, dirs));
  for (const e of entries) if (e.type === 'blob' && under(e.path, names)) listed.add(e.path);
  if (wanted.length) {
    const blobs = await readNamed(repo, wanted.map((e) => e.sha));
    for (const e of wanted) {
      const b = blobs.get(e.sha);
      if (!b) missing.push(e.path);
      files.set(e.path, { path: e.path, mode: e.mode, sha: e.sha, data: b?.data ?? Buffer.alloc(0) });
    }
  }
  return { files, names: listed, odd, missing };
}

/** The bytes of `paths` in the tree of `commit` (a path that is not a file there is left out). */
export async function readPaths(repo: Repo, commit: string | null, paths: string[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!commit || paths.length === 0) return out;
  const got = await readNamed(repo, paths.map((p) => `${commit}:${p}`));
  for (const p of paths) {
    const b = got.get(`${commit}:${p}`);
    if (b && b.type === 'blob') out.set(p, b.data);
  }
  return out;
}

/** Where offhost keeps private files in the shared git directory. */
export function privateDir(repo: Repo): string {
  return join(repo.commonDir, 'offhost');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes private index files (and their `.lock`) left by offhost processes of this host that no longer
 * run. Returns what it removed, for `lock status`.
 */
export function removeStaleTemp(repo: Repo): string[] {
  const dir = join(privateDir(repo), 'tmp');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
  for (const n of names) {
    const m = /^index-(.+)-(\d+)-[a-z0-9]+(?:\.lock)?$/.exec(n);
    if (!m) continue;
    const sameHost = m[1] === host;
    let old = false;
    try {
      old = Date.now() - statSync(join(dir, n)).mtimeMs > 3_600_000;
    } catch {
      continue;
    }
    if ((sameHost && !alive(Number(m[2]))) || (!sameHost && old)) {
      try {
        unlinkSync(join(dir, n));
        removed.push(join(dir, n));
      } catch {
        /* gone already */
      }
    }
  }
  return removed;
}

export interface Identity {
  name: string;
  email: string;
}

/**
 * A commit on `base` (or a root commit) whose tree is base's with `changes` applied (bytes, or null to
 * delete). Objects only: no ref moves. `fallback` is the identity used when git has none (no user.name
 * and no GIT_AUTHOR_* / GIT_COMMITTER_*): the variables, when set, always win.
 */
export async function buildCommit(
  repo: Repo,
  base: string | null,
  changes: Map<string, string | Buffer | null>,
  message: string,
  fallback: Identity,
): Promise<string> {
  const quick = await buildHere(repo, base, changes, message, fallback);
  if (quick) return quick;
  const blobs = new Map<string, string>();
  for (const [path, content] of changes) {
    if (content === null) continue;
    blobs.set(path, await gitText(['hash-object', '-w', '--stdin'], call(repo, { input: content })));
  }
  const tmp = join(privateDir(repo), 'tmp');
  mkdirSync(tmp, { recursive: true });
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
  const index = join(tmp, `index-${host}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`);
  const withIndex = (more: Partial<GitCall> = {}) => call(repo, { ...more, extra: { ...(more.extra ?? {}), GIT_INDEX_FILE: index } });
  try {
    await gitOk(base ? ['read-tree', base] : ['read-tree', '--empty'], withIndex());
    const lines: string[] = [];
    for (const [path, content] of changes) {
      lines.push(content === null ? `0 ${ZERO_SHA}\t${path}` : `100644 ${blobs.get(path)}\t${path}`);
    }
    if (lines.length) await gitOk(['update-index', '--index-info'], withIndex({ input: `${lines.join('\n')}\n` }));
    const tree = await gitText(['write-tree'], withIndex());
    const args = ['commit-tree', tree, ...(base ? ['-p', base] : []), '-F', '-'];
    const r = await runGit(args, call(repo, { input: message }));
    if (r.code === 0) return r.stdout.toString('utf8').trim();
    if (!/identity|ident name|unable to auto-detect|empty ident/i.test(r.stderr)) throw new GitError(`git commit-tree failed: ${r.stderr.trim()}`);
    const env = repo.env ?? process.env;
    const extra: Record<string, string> = {};
    for (const who of ['AUTHOR', 'COMMITTER']) {
      if (!env[`GIT_${who}_NAME`]) extra[`GIT_${who}_NAME`] = fallback.name;
      if (!env[`GIT_${who}_EMAIL`]) extra[`GIT_${who}_EMAIL`] = fallback.email;
    }
    return await gitText(args, call(repo, { input: message, extra }));
  } finally {
    rmSync(index, { force: true });
    rmSync(`${index}.lock`, { force: true });
  }
}

/** The objects of the commits this process made itself, by commit id (for followers: writtenInto). */
const built = new Map<string, { parent: string; objects: LooseObject[] }>();

/**
 * The commit made here (./loose-objects.ts) when that is exactly git's; null when git must make it. The
 * identity is git's: the first commit of a process (per repository and identity variables) is made by
 * `commit-tree` on the tree written here (with `fallback` for what git lacks, as buildCommit does), and
 * its author and committer lines are reused for the next ones.
 */
async function buildHere(repo: Repo, base: string | null, changes: Map<string, string | Buffer | null>, message: string, fallback: Identity): Promise<string | null> {
  const env = repo.env ?? process.env;
  if (!base || env.GIT_AUTHOR_DATE || env.GIT_COMMITTER_DATE || env.OFFHOST_GIT_OBJECTS === 'git') return null;
  const c = call(repo);
  const idVars = ['AUTHOR', 'COMMITTER'].flatMap((w) => [env[`GIT_${w}_NAME`] ?? '', env[`GIT_${w}_EMAIL`] ?? '']).join('\0');
  const key = `${repo.commonDir}\0${idVars}`;
  const fallbackKey = `${key}\0${fallback.name}\0${fallback.email}`;
  const needsFallback = knownIdents(key) === 'fallback';
  const known = knownIdents(needsFallback ? fallbackKey : key);
  const idents = known === undefined || known === 'fallback' ? null : known;
  const objects = await commitObjects(c, base, changes, message, idents ?? { author: '', committer: '' }, new Date());
  if (!objects) return null;
  let id: string;
  if (idents) {
    writeLoose(join(repo.commonDir, 'objects'), objects);
    id = objects[objects.length - 1]!.id;
  } else {
    // The blobs and trees are ours; the commit is git's, and tells the identity for the next ones.
    writeLoose(join(repo.commonDir, 'objects'), objects.slice(0, -1));
    const args = ['commit-tree', objects[objects.length - 2]!.id, '-p', base, '-F', '-'];
    let out: string | null = null;
    if (!needsFallback) {
      const r = await runGit(args, call(repo, { input: message }));
      if (r.code === 0) out = r.stdout.toString('utf8').trim();
      else if (!/identity|ident name|unable to auto-detect|empty ident/i.test(r.stderr)) throw new GitError(`git commit-tree failed: ${r.stderr.trim()}`);
      else rememberIdents(key, 'fallback');
    }
    const usedFallback = out === null;
    if (out === null) {
      const extra: Record<string, string> = {};
      for (const who of ['AUTHOR', 'COMMITTER']) {
        if (!env[`GIT_${who}_NAME`]) extra[`GIT_${who}_NAME`] = fallback.name;
        if (!env[`GIT_${who}_EMAIL`]) extra[`GIT_${who}_EMAIL`] = fallback.email;
      }
      out = await gitText(args, call(repo, { input: message, extra }));
    }
    id = out;
    const made = (await catFile(c, [id])).objects[0];
    const learned = made?.type === 'commit' ? identsOf(made.data) : null;
    // Without its bytes the commit is still git's; only the follower copies it the slow way.
    if (!made || !learned) return id;
    rememberIdents(usedFallback ? fallbackKey : key, learned);
    objects[objects.length - 1] = { type: 'commit', body: made.data, id };
  }
  built.set(id, { parent: base, objects });
  if (built.size > 16) built.delete(built.keys().next().value!);
  return id;
}

/** Whether this process wrote `commit` itself (not through git's commit-tree). */
export function madeHere(commit: string): boolean {
  return built.has(commit);
}

/**
 * Gives `to`, whose copy of the history is at `parent`, the objects of `commit` when this process made
 * that commit on `parent`: true when written, false when they must be copied (copyObjects).
 */
export function writtenInto(to: Repo, commit: string, parent: string | null): boolean {
  const b = built.get(commit);
  if (!b || parent === null || b.parent !== parent) return false;
  writeLoose(join(to.commonDir, 'objects'), b.objects);
  return true;
}

/** Starts, ahead of a move with `reason` in `repo`, the git that will make it (./ref-writer.ts; casRef uses it). */
export function prepareRefMoves(repo: Repo, reason: string): void {
  prepareRefWriter(call(repo), reason);
}

/** How long a ref's `.lock` may exist before it is taken as left by a killed git (git holds it for ms). */
const STALE_REF_LOCK_MS = 10_000;

/**
 * Moves `ref` from `old` (null: must not exist) to `next`, atomically. 'moved' when the ref is no longer at
 * `old` (someone else wrote first). A `<ref>.lock` left by a git process killed mid-update is removed
 * once it is older than 10 s (offhost is this ref's only writer); `recovered` is told.
 */
export async function casRef(
  repo: Repo,
  ref: string,
  next: string,
  old: string | null,
  reason: string,
  recovered?: (what: string) => void,
): Promise<'ok' | 'moved'> {
  // A writer made ready for this reason (./ref-writer.ts) moves it without starting git now; when it cannot
  // tell, the ref says whether its move was made before git is asked as below.
  const ready = await moveWithWriter(call(repo), reason, ref, next, old ?? ZERO_SHA);
  if (ready === 'ok' || ready === 'moved') return ready;
  if (ready === 'unknown' && (await readRef(repo, ref)) === next) return 'ok';
  const start = Date.now();
  for (;;) {
    const r = await runGit(['update-ref', '-m', reason, ref, next, old ?? ZERO_SHA], call(repo));
    if (r.code === 0) return 'ok';
    const lockFile = join(repo.commonDir, `${ref}.lock`);
    if (/\.lock': File exists|Unable to create .*\.lock/i.test(r.stderr)) {
      let age = 0;
      try {
        age = Date.now() - statSync(lockFile).mtimeMs;
      } catch {
        /* released meanwhile */
      }
      if (age > STALE_REF_LOCK_MS) {
        rmSync(lockFile, { force: true });
        recovered?.(`removed ${lockFile}, left by a git process that was killed while moving ${ref}`);
        continue;
      }
      // Bounded: a live git holds it for milliseconds, a dead one's is stale after STALE_REF_LOCK_MS.
      if (Date.now() - start > STALE_REF_LOCK_MS + 5_000) throw new GitError(`${lockFile} keeps coming back: another process is moving ${ref} in a loop; nothing was changed`);
      await new Promise((res) => setTimeout(res, 10 + Math.random() * 40));
      continue;
    }
    if (/cannot lock ref|is at .* but expected|reference already exists|unable to resolve reference/i.test(r.stderr)) return 'moved';
    throw new GitError(`git update-ref ${ref} failed: ${r.stderr.trim()}`);
  }
}

const NET_TIMEOUT_MS = 60_000;

/** Where `ref` is on `remote` (one `ls-remote`), or null when the remote has no such ref. */
export async function remoteRef(repo: Repo, remote: string, ref: string, opts: { background?: boolean } = {}): Promise<string | null> {
  const r = await runGit(['ls-remote', '--refs', remote, ref], call(repo, { timeoutMs: NET_TIMEOUT_MS, ...(opts.background ? { background: true } : {}) }));
  if (r.code !== 0) throw new GitError(`cannot read ${ref} from the remote ${remote}: ${r.stderr.trim().split('\n')[0] ?? `exit ${r.code}`}`);
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [sha, name] = line.split('\t');
    if (name === ref && sha) return sha;
  }
  return null;
}

/** Whether the object exists here. */
export async function hasObject(repo: Repo, sha: string): Promise<boolean> {
  return hasCommitAt(call(repo), sha);
}

/** Whether `sha` names a commit the repository of `c` holds (the batch process; git's `cat-file -e` if it died). */
export async function hasCommitAt(c: GitCall, sha: string): Promise<boolean> {
  const fast = await catFile(c, [`${sha}^{commit}`]).catch(() => null);
  if (fast) return fast.objects[0]?.type === 'commit';
  return (await runGit(['cat-file', '-e', `${sha}^{commit}`], c)).code === 0;
}

/** The bytes of the blob `name` (`<rev>:<path>`) in the repository of `c`, or null when it is no blob there. */
export async function blobAt(c: GitCall, name: string): Promise<Buffer | null> {
  const fast = await catFile(c, [name]).catch(() => null);
  if (fast) return fast.objects[0]?.type === 'blob' ? fast.objects[0].data : null;
  const r = await runGit(['cat-file', 'blob', name], c);
  return r.code === 0 ? r.stdout : null;
}

/**
 * Fetches the objects of the remote's `ref`, updating no ref and no FETCH_HEAD (no lock file that a killed
 * fetch could leave behind; the caller swaps its own ref to the commit it then finds here).
 */
export async function fetchRef(repo: Repo, remote: string, ref: string): Promise<void> {
  const r = await runGit(['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', remote, ref], call(repo, { timeoutMs: NET_TIMEOUT_MS }));
  if (r.code !== 0 && !/couldn't find remote ref/i.test(r.stderr)) {
    throw new GitError(`git fetch ${remote} ${ref} failed: ${r.stderr.trim().split('\n')[0] ?? `exit ${r.code}`}`);
  }
}

/**
 * Pushes `next` to the remote's `ref` only if the remote is still at `old` (null: has no such ref).
 * 'moved' when someone else pushed first (the lease failed, or the remote lost the race for its ref lock);
 * 'refused' when the remote said no for another reason (a pre-receive or update hook, a protected or hidden
 * ref): retrying cannot change that, so the remote's own words are returned.
 */
export async function pushLease(
  repo: Repo,
  remote: string,
  ref: string,
  next: string,
  old: string | null,
): Promise<{ outcome: 'ok' } | { outcome: 'moved' } | { outcome: 'refused'; message: string }> {
  const r = await runGit(
    ['push', '--quiet', '--porcelain', '--no-verify', `--force-with-lease=${ref}:${old ?? ''}`, remote, `${next}:${ref}`],
    call(repo, { timeoutMs: NET_TIMEOUT_MS }),
  );
  if (r.code === 0) return { outcome: 'ok' };
  return classifyPushFailure(r.stdout.toString('utf8'), r.stderr, remote, ref);
}

/** Why a push of the lock ref failed, from git's porcelain status line and the remote's messages. Pure. */
export function classifyPushFailure(stdout: string, stderr: string, remote: string, ref: string): { outcome: 'moved' } | { outcome: 'refused'; message: string } {
  // The porcelain line of the ref: `!\t<src>:<dst>\t[rejected] (stale info)` or `[remote rejected] (<why>)`.
  const status = stdout.split('\n').find((l) => l.startsWith('!') && l.includes(ref)) ?? '';
  const text = `${status}\n${stderr}`;
  // A lost race: the lease (stale info), or the remote's own compare-and-swap of the ref (another push won).
  if (/stale info|incorrect old value|cannot lock ref|failed to update ref|is at [0-9a-f]+ but expected|reference already exists/i.test(text)) return { outcome: 'moved' };
  if (/rejected|declined|denied|protected|hidden ref|refusing/i.test(text)) {
    const said = stderr
      .split('\n')
      .filter((l) => /^remote:/.test(l) && l.replace(/^remote:\s*/, '').trim() !== '')
      .map((l) => l.replace(/^remote:\s*/, '').trim());
    const why = /\[(?:remote )?rejected\]\s*\(([^)]*)\)/.exec(status)?.[1] ?? /\(([^)]*)\)\s*$/.exec(status)?.[1] ?? 'rejected';
    return { outcome: 'refused', message: `the remote ${remote} refused the push of ${ref} (${why})${said.length ? `; it said: ${said.slice(0, 6).join(' / ')}` : ''}` };
  }
  throw new GitError(`git push ${remote} ${ref} failed: ${stderr.trim().split('\n')[0] ?? 'no message'}`);
}

/**
 * Copies the objects of `commit` that `to` lacks from `from` (two repositories on this machine): one
 * `pack-objects --revs` there, one `unpack-objects` here; `have` are commits `to` holds already (their
 * objects are left out). Cheaper than a fetch (no negotiation, no upload-pack), for the few objects of a
 * lock change.
 */
export async function copyObjects(from: Repo, to: Repo, commit: string, have: (string | null)[]): Promise<void> {
  const revs = `${commit}\n${have.filter((h): h is string => Boolean(h)).map((h) => `^${h}\n`).join('')}`;
  const pack = await gitOk(['pack-objects', '--revs', '--stdout', '-q'], call(from, { input: revs }));
  await gitOk(['unpack-objects', '-q'], call(to, { input: pack }));
}
