// Reads the staged lock transition: the lock files in HEAD and in the INDEX (not the working tree), with git
// plumbing (`diff --cached --name-status -z`, `ls-tree`, `ls-files`, `cat-file --batch`). Read-only.
// The environment is inherited: inside a pre-commit hook GIT_INDEX_FILE names the index being committed
// (a temporary one for `git commit <paths>`), which is the one to read.
import { spawn } from 'node:child_process';
import { GitError } from '../errors.js';

export interface GitExec {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

function git(args: string[], ex: GitExec, input?: string): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: ex.cwd, env: ex.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => reject(new GitError(`cannot run git: ${e.message}`)));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }));
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
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

function splitZ(buf: Buffer): string[] {
  const s = buf.toString('utf8');
  const parts = s.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

export interface StagedChange {
  status: 'A' | 'M' | 'D' | 'T' | 'U' | 'X';
  path: string;
}

/** Paths staged under `pathspecs` relative to HEAD (renames as delete + add). Run at the repository root. */
export async function stagedChanges(ex: GitExec, pathspecs: string[], head: boolean): Promise<StagedChange[]> {
  const args = ['diff', '--cached', '--name-status', '-z', '--no-renames', '--no-ext-diff'];
  if (head) args.push('HEAD');
  else args.push('4b825dc642cb6eb9a060e54bf8d69288fbee4904'); // the empty tree: everything staged is added
  const parts = splitZ(await gitOk([...args, '--', ...pathspecs], ex));
  const out: StagedChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    out.push({ status: parts[i]!.charAt(0) as StagedChange['status'], path: parts[i + 1]! });
  }
  return out;
}

/**
 * Reads many blobs at once (`git cat-file --batch`): specs like `HEAD:path` or `:path` (index). Missing
 * objects are left out. Paths holding a newline cannot be asked for this way and are left out too.
 */
export async function readBlobs(ex: GitExec, specs: string[]): Promise<Map<string, Buffer>> {
  const asked = specs.filter((s) => !/[\r\n]/.test(s));
  const result = new Map<string, Buffer>();
  if (asked.length === 0) return result;
  const out = await gitOk(['cat-file', '--batch'], ex, asked.map((s) => `${s}\n`).join(''));
  let pos = 0;
  for (const spec of asked) {
    const nl = out.indexOf(10, pos);
    if (nl < 0) break;
    const header = out.subarray(pos, nl).toString('utf8');
    pos = nl + 1;
    const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
    if (!m) continue; // "<spec> missing" / "ambiguous"
    const size = Number(m[2]);
    if (m[1] === 'blob') result.set(spec, out.subarray(pos, pos + size));
    pos += size + 1;
  }
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
