// Reads the staged lock transition: the lock files in HEAD and in the INDEX (not the working tree), with git
// plumbing (`diff --cached --name-status -z`, `ls-tree`, `ls-files`, `cat-file --batch`). Read-only.
// The environment is inherited: inside a pre-commit hook GIT_INDEX_FILE names the index being committed
// (a temporary one for `git commit <paths>`), which is the one to read.
import { GitError } from '../errors.js';
import { catFileInput, EMPTY_TREE, parseCatFileBatch, parseNameStatus, splitZ } from './plumbing.js';
import { runGit } from './run.js';

export interface GitExec {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

// Inside a pre-commit hook GIT_INDEX_FILE (and GIT_DIR) name the index being committed: inherited on purpose.
function git(args: string[], ex: GitExec, input?: string): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return runGit(args, { cwd: ex.cwd, env: ex.env, repoEnv: 'inherit', ...(input !== undefined ? { input } : {}) });
}

async function gitOk(args: string[], ex: GitExec, input?: string): Promise<Buffer> {
  const r = await git(args, ex, input);
  if (r.code !== 0) throw new GitError(`git ${args[0]} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
  return r.stdout;
}

/** The top of the working tree holding `cwd`; GitError when it is not in a git repository. */
export async function repoRoot(ex: GitExec): Promise<string> {
  const r = await git(['rev-parse', '--show-toplevel'], ex);
  if (r.code !== 0) {
    throw new GitError(`${ex.cwd} is not inside a git repository (${r.stderr.trim().split('\n')[0] || 'git rev-parse failed'})`);
  }
  return r.stdout.toString('utf8').trim();
}

export async function hasHead(ex: GitExec): Promise<boolean> {
  return (await git(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], ex)).code === 0;
}

export interface StagedChange {
  status: 'A' | 'M' | 'D' | 'T' | 'U' | 'X';
  path: string;
}

/** Paths staged under `pathspecs` relative to HEAD (renames as delete + add). Run at the repository root. */
export async function stagedChanges(ex: GitExec, pathspecs: string[], head: boolean): Promise<StagedChange[]> {
  const args = ['diff', '--cached', '--name-status', '-z', '--no-renames', '--no-ext-diff'];
  if (head) args.push('HEAD');
  else args.push(EMPTY_TREE); // everything staged is added
  return parseNameStatus(await gitOk([...args, '--', ...pathspecs], ex)).map((c) => ({ status: c.status as StagedChange['status'], path: c.path }));
}

/**
 * Reads many blobs at once (`git cat-file --batch`): specs like `HEAD:path` or `:path` (index). Missing
 * objects are left out. Paths holding a newline cannot be asked for this way and are left out too.
 */
export async function readBlobs(ex: GitExec, specs: string[]): Promise<Map<string, Buffer>> {
  const { asked, input } = catFileInput(specs);
  const result = new Map<string, Buffer>();
  if (asked.length === 0) return result;
  for (const [spec, b] of parseCatFileBatch(await gitOk(['cat-file', '--batch'], ex, input), asked)) if (b.type === 'blob') result.set(spec, b.data);
  return result;
}

export interface StagedTransition {
  root: string;
  before: Map<string, string>;
  after: Map<string, string>;
  changed: StagedChange[];
}

/**
 * The lock files under `noticesDir` in HEAD (`before`) and in the index (`after`): every changed path, plus
 * every active VM lock and component lock of each side (what transitionFindings needs). Repository-relative
 * paths with `/`.
 */
export async function readStagedTransition(ex: GitExec, noticesDir: string): Promise<StagedTransition> {
  const root = await repoRoot(ex);
  const at: GitExec = { cwd: root, env: ex.env };
  const head = await hasHead(at);
  const dir = noticesDir.replace(/\\/g, '/').replace(/^\.\/+/, '').replace(/\/+$/, '');
  const spec = dir === '' || dir === '.' ? '.' : dir;
  const held = [`${dir ? `${dir}/` : ''}vm-active`, `${dir ? `${dir}/` : ''}active`];
  const changed = await stagedChanges(at, [spec], head);
  const beforePaths = new Set<string>();
  const afterPaths = new Set<string>();
  for (const c of changed) {
    if (c.status !== 'A') beforePaths.add(c.path);
    if (c.status !== 'D') afterPaths.add(c.path);
  }
  if (head) for (const p of splitZ(await gitOk(['ls-tree', '-r', '-z', '--name-only', 'HEAD', '--', ...held], at))) beforePaths.add(p);
  for (const p of splitZ(await gitOk(['ls-files', '-z', '--cached', '--', ...held], at))) afterPaths.add(p);
  const specs = [...(head ? [...beforePaths].map((p) => `HEAD:${p}`) : []), ...[...afterPaths].map((p) => `:${p}`)];
  const blobs = await readBlobs(at, specs);
  const before = new Map<string, string>();
  const after = new Map<string, string>();
  const decoder = new TextDecoder('utf-8');
  if (head) for (const p of beforePaths) {
    const b = blobs.get(`HEAD:${p}`);
    if (b) before.set(p, decoder.decode(b));
  }
  for (const p of afterPaths) {
    const b = blobs.get(`:${p}`);
    if (b) after.set(p, decoder.decode(b));
  }
  return { root, before, after, changed };
}
