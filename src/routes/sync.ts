// How the VM gets the laptop's source before `offhost run` runs a command there (issue 11 item 1):
//
//   shared  the VM sees the tree at the mapped path (R6: a bind mount or an NFS export): nothing to copy;
//           the run verifies it.
//   rsync   the exact source set (./source.ts) is copied with rsync into a guest-local directory per
//           repository and branch, `<guest_dir>/<repo>/<branch>`; files the laptop deleted are deleted
//           there by the run's VM script. Only files that changed since the last verified copy are sent
//           (with --ignore-times: a same-size edit in the same second is not skipped); a first copy, or
//           one after a refused verification, compares every file by checksum.
//   git     HEAD, or when the tree is dirty a snapshot commit of it (built in a temporary index in the git
//           directory with commit-tree: the user's index, working tree and refs are not touched), is
//           pushed to `refs/offhost/run/<branch>` of a bare repository on the VM,
//           `<guest_dir>/<repo>.git`, and checked out detached into `<guest_dir>/<repo>/<branch>` by the
//           run's VM script.
//
// rsync and git reach the VM over ssh: the ssh backend directly, incus and docker behind `host`
// (`--rsync-path` / `--receive-pack` run `incus exec INSTANCE -- …` there). rsync reaches Lima and Tart
// guests through limactl / tart exec (./guest-copy.ts), and is their default. Other backends have no
// transport for them: their VMs use `sync: shared`.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ConfigError } from '../errors.js';
import { quote, quoteArgv } from './quote.js';
import { probeRsyncKept, rsyncProblem } from './rsync-probe.js';
import { guestCopy } from './guest-copy.js';
import { gitEnv, gitText, type SourceState } from './source.js';
import type { VmSpec } from './types.js';
import { INLINE_MAX_BYTES } from './tar.js';
import { keepSnapshot, keptSnapshot, snapshotKey } from './snapshot-reuse.js';
export { forgetSnapshot } from './snapshot-reuse.js';

export type SyncMode = 'shared' | 'rsync' | 'git';
export const DEFAULT_GUEST_DIR = '/var/tmp/offhost';

export class SyncError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SyncError';
  }
}

export function syncMode(vm: VmSpec): SyncMode {
  // Lima and Tart mount the host's tree read-only: their builds run in a guest-local copy (./guest-copy.ts).
  return vm.sync ?? (guestCopy(vm) ? 'rsync' : 'shared');
}

function slug(s: string): string {
  const clean = s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '').slice(0, 60);
  // Distinct branches that clean to the same name (a/b and a-b) keep distinct directories.
  return clean === s ? clean || 'x' : `${clean || 'x'}-${createHash('sha256').update(s).digest('hex').slice(0, 8)}`;
}

/** The VM-side directory of a copy: `<guest_dir>/<repo>/<branch>` (`detached` without a branch). */
export function guestTreeDir(vm: VmSpec, state: Pick<SourceState, 'root' | 'branch'>): string {
  const base = (vm.guest_dir ?? DEFAULT_GUEST_DIR).replace(/\/+$/, '') || '/';
  return `${base}/${slug(basename(state.root))}/${slug(state.branch ?? 'detached')}`;
}

export function guestBareRepo(vm: VmSpec, state: Pick<SourceState, 'root'>): string {
  const base = (vm.guest_dir ?? DEFAULT_GUEST_DIR).replace(/\/+$/, '') || '/';
  return `${base}/${slug(basename(state.root))}.git`;
}

/** ssh destination plus the words that reach the VM from there. */
export function sshTransport(vm: VmSpec): { dest: string; user?: string; prefix: string[] } {
  const mode = syncMode(vm);
  if (vm.backend === 'ssh') {
    const dest = vm.host ?? vm.instance;
    if (!dest) throw new ConfigError(`vm ${vm.id}: backend ssh needs \`host\``);
    return { dest, ...(vm.user ? { user: vm.user } : {}), prefix: [] };
  }
  if (vm.backend === 'incus' && vm.host) {
    return { dest: vm.host, prefix: ['incus', 'exec', vm.instance ?? '', ...(vm.user ? ['--user', vm.user] : []), '--'] };
  }
  if (vm.backend === 'docker' && vm.host) {
    return { dest: vm.host, prefix: ['docker', 'exec', '-i', ...(vm.user ? ['-u', vm.user] : []), vm.instance ?? ''] };
  }
  throw new ConfigError(
    `vm ${vm.id}: sync: ${mode} needs an ssh transport (backend ssh, or incus/docker with \`host\`); backend ${vm.backend}${vm.host ? '' : ' without host'} has none. Use sync: shared (a bind mount or NFS export of the tree) for it.`,
  );
}

function sshCommand(vm: VmSpec, user?: string): string {
  return quoteArgv(['ssh', ...(vm.sshOptions ?? []), ...(user ? ['-l', user] : [])]);
}

/** Runs a program, collecting stderr; SyncError with it on failure. */
function spawnCollect(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: Buffer }, what: string): Promise<void> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    child.on('error', (e) => rej(new SyncError(`${what}: ${e.message}`)));
    // A program that ends before reading all its input (rsync failing at once) makes the write fail with
    // EPIPE: its exit status, on 'close', is the error to report.
    child.stdin.on('error', () => undefined);
    child.on('close', (code, sig) => {
      if (code === 0) res();
      else rej(new SyncError(`${what} failed (${sig ?? `exit ${code}`}): ${err.trim() || 'no message'}`));
    });
    child.stdin.end(opts.input ?? Buffer.alloc(0));
  });
}

// ---------------------------------------------------------------------------------------------------
// rsync

/** The manifest of the last copy verified on the VM, per VM and directory (laptop side). */
function cacheFile(stateDir: string, vm: VmSpec, dir: string): string {
  return join(stateDir, 'sync', `${vm.id}-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}.manifest`);
}

function manifestPaths(manifest: string): Map<string, string> {
  const out = new Map<string, string>();
  const [hashes = '', execs = ''] = manifest.split('--exec--\n');
  for (const l of hashes.split('\n')) if (l.length > 66) out.set(l.slice(66), l.slice(0, 64));
  for (const l of execs.split('\n')) if (out.has(l)) out.set(l, `${out.get(l)}x`);
  return out;
}

/**
 * The files of the source set whose content or exec bit differ from the copy last verified at `dir` on
 * the VM (deleted ones are the VM script's to delete); null when no copy was verified there.
 */
export function changedSince(vm: VmSpec, state: SourceState, dir: string, stateDir: string): string[] | null {
  let text: string;
  try {
    text = readFileSync(cacheFile(stateDir, vm, dir), 'utf8');
  } catch {
    return null;
  }
  // The same manifest (most runs): nothing to compare line by line.
  if (text === state.manifest) return [];
  const prev = manifestPaths(text);
  const now = manifestPaths(state.manifest);
  return state.files.filter((f) => prev.get(f) !== now.get(f));
}

export interface RsyncResult {
  /** Files sent (null: every file, compared by checksum). */
  sent: number | null;
}

/**
 * Copies the source set into `dir` on the VM. `only`: just these paths (after a refused verification);
 * else the files changed since the last verified copy, or all of them by checksum when there is none.
 */
export async function rsyncTree(vm: VmSpec, state: SourceState, dir: string, env: NodeJS.ProcessEnv, stateDir: string, only?: string[]): Promise<RsyncResult> {
  const guest = guestCopy(vm);
  const t = guest ? null : sshTransport(vm);
  let files: string[];
  let checksum = false;
  if (only) files = only;
  else {
    const changed = changedSince(vm, state, dir, stateDir);
    if (changed === null) {
      files = state.files;
      checksum = true;
    } else files = changed;
  }
  // Nothing changed since the last verified copy: no connection at all (the run's VM script verifies it;
  // a copy gone missing since is sent again in full).
  if (files.length === 0 && !checksum && !only) return { sent: 0 };
  // Make the directory even when nothing is sent (a first run of an empty tree).
  if (files.length === 0 || guest) {
    if (guest) await spawnCollect(guest.mkdir(dir)[0]!, guest.mkdir(dir).slice(1), { cwd: state.root, env }, `${guest.mkdir(dir).join(' ')}`);
    else await spawnCollect('ssh', [...(vm.sshOptions ?? []), ...(t!.user ? ['-l', t!.user] : []), t!.dest, '--', quoteArgv([...t!.prefix, 'mkdir', '-p', dir])], { cwd: state.root, env }, `ssh ${t!.dest} mkdir -p ${dir}`);
    if (files.length === 0) return { sent: 0 };
  }
  // openrsync (a Mac's /usr/bin/rsync) takes a subset of GNU rsync's options: refuse before connecting.
  const problem = rsyncProblem(probeRsyncKept(env, stateDir));
  if (problem) throw new SyncError(problem);
  const list = Buffer.from(files.map((f) => `${f.replace(/^\.\//, '')}\0`).join(''));
  const args = [
    '-a',
    '--from0',
    '--files-from=-',
    checksum ? '--checksum' : '--ignore-times',
    '--no-owner',
    '--no-group',
    '-e', guest ? guest.rsh : sshCommand(vm, t!.user),
    // rsync hands `<rsync-path> --server …` to the remote shell: make the directory there, then exec rsync.
    `--rsync-path=${guest ? 'rsync' : quoteArgv([...t!.prefix, 'sh', '-c', `mkdir -p ${quote(dir)} && exec rsync "$@"`, 'rsync'])}`,
    './',
    `${guest ? guest.dest : t!.dest}:${dir}/`,
  ];
  await spawnCollect('rsync', args, { cwd: state.root, env, input: list }, `rsync to ${vm.id}:${dir}`);
  return { sent: checksum ? null : files.length };
}

/** After the VM verified the copy: remember its manifest (the next run sends only what changed). */
export function rememberVerified(stateDir: string, vm: VmSpec, dir: string, manifest: string): void {
  const f = cacheFile(stateDir, vm, dir);
  // The same copy as last time (most runs): not written again (a 10,000-file manifest is about 1 MB).
  try {
    if (readFileSync(f, 'utf8') === manifest) return;
  } catch {
    // none yet
  }
  mkdirSync(join(stateDir, 'sync'), { recursive: true });
  writeFileSync(f, manifest);
}

export function forgetVerified(stateDir: string, vm: VmSpec, dir: string): void {
  rmSync(cacheFile(stateDir, vm, dir), { force: true });
}

// ---------------------------------------------------------------------------------------------------
// git

/**
 * The commit that is the working tree: HEAD itself when clean, else a snapshot commit (parent HEAD) of
 * every tracked and untracked-not-ignored file, built in a temporary index inside the git directory.
 * Same tree on the same HEAD gives the same commit id (dates are HEAD's), so an unchanged tree pushes
 * nothing.
 */
export async function snapshotCommit(
  state: SourceState,
  /** Directories (`a/b/`) that are not source (offhost's lock files, which the lock writes into the tree): left out. */
  skipDirs: readonly string[] = [],
): Promise<string> {
  if (state.clean && state.head) return state.head;
  // The paths git status named (the only ones `add -A` reads below), and the commit the last run made from
  // exactly these (./snapshot-reuse.ts): an unchanged dirty tree is the same commit, without four processes.
  const changedNamed = state.changed !== null ? state.changed.filter((p) => !skipDirs.some((d) => p.startsWith(d))) : null;
  const small = changedNamed !== null && changedNamed.length <= 500 && changedNamed.reduce((n, p) => n + p.length + 1, 0) < 64 * 1024;
  const reuse = small ? snapshotKey(state, skipDirs, changedNamed!) : null;
  if (reuse) {
    const kept = await keptSnapshot(state.gitDir, reuse.key, async (sha) => (await gitText(state.root, ['cat-file', '-t', sha]).catch(() => '')) === 'commit');
    if (kept) return kept;
  }
  const index = join(state.gitDir, `offhost-snapshot-${process.pid}.index`);
  const env = gitEnv({ GIT_INDEX_FILE: index });
  try {
    // A copy of the checkout's own index, whose entries carry the files' stat: `git add -A` then hashes only
    // what changed (an index read from HEAD has no stat, and every file of the tree was hashed again). Either
    // way `add -A` makes the index the working tree's tracked and not-ignored files, which is the snapshot.
    let copied = false;
    try {
      const real = join(state.gitDir, 'index');
      const was = statSync(real);
      copyFileSync(real, index);
      // With the original's mtime (never later): git takes an entry whose file changed in the same tick as
      // the index was written ("racily clean") by the index file's own mtime, and a copy made now would pass
      // such an entry as unchanged (an edit of the same size right after a commit kept the old content).
      const t = Math.floor(was.mtimeMs) / 1000;
      utimesSync(index, t, t);
      copied = true;
    } catch {
      // No index yet (a fresh repository), or one that cannot be read: the tree is read from HEAD.
    }
    if (!copied) {
      if (state.head) await gitText(state.root, ['read-tree', state.head], env);
      else await gitText(state.root, ['read-tree', '--empty'], env);
    }
    // The lock's view of the checkout (its lock files, rewritten by every lock command) is not the source: a
    // snapshot with it was a new commit on every run, pushed again though nothing of the source changed.
    // From the checkout's own index, only the paths where git status saw the tree differ from it need adding:
    // `add -A` of those alone is `add -A` of the tree, without a stat of every other file (a few hundred at most).
    const named = copied && state.changed !== null ? state.changed.filter((p) => !skipDirs.some((d) => p.startsWith(d))) : null;
    if (named !== null && named.length <= 500 && named.reduce((n, p) => n + p.length + 1, 0) < 64 * 1024) {
      if (named.length) await gitText(state.root, ['add', '-A', '--', ...named], { ...env, GIT_LITERAL_PATHSPECS: '1' });
    } else await gitText(state.root, ['add', '-A', '--', '.', ...skipDirs.map((d) => `:(exclude,literal)${d}`)], env);
    const tree = await gitText(state.root, ['write-tree'], env);
    let date = '@0 +0000';
    if (state.head) date = await gitText(state.root, ['log', '-1', '--format=@%ct +0000', state.head]);
    const who = { GIT_AUTHOR_NAME: 'offhost', GIT_AUTHOR_EMAIL: 'offhost@localhost', GIT_COMMITTER_NAME: 'offhost', GIT_COMMITTER_EMAIL: 'offhost@localhost', GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date };
    const commit = await gitText(state.root, ['commit-tree', tree, ...(state.head ? ['-p', state.head] : []), '-m', `offhost run: snapshot of the working tree on ${state.branch ?? 'a detached HEAD'}`], gitEnv(who));
    // Kept only when made from the index copy and the named paths alone, none of them racy.
    if (reuse && !reuse.racy && copied && named !== null) keepSnapshot(state.gitDir, reuse.key, commit);
    return commit;
  } finally {
    rmSync(index, { force: true });
  }
}

/** The ref a run's commit is pushed to on the VM. */
export function runRef(state: Pick<SourceState, 'branch'>): string {
  return `refs/offhost/run/${slug(state.branch ?? 'detached')}`;
}

/** The commit last verified in `dir` on the VM (git mode), from the laptop-side cache. */
export function verifiedCommit(stateDir: string, vm: VmSpec, dir: string): string | null {
  try {
    return readFileSync(`${cacheFile(stateDir, vm, dir)}.commit`, 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export function rememberVerifiedCommit(stateDir: string, vm: VmSpec, dir: string, commit: string): void {
  mkdirSync(join(stateDir, 'sync'), { recursive: true });
  writeFileSync(`${cacheFile(stateDir, vm, dir)}.commit`, `${commit}\n`);
}

export function forgetVerifiedCommit(stateDir: string, vm: VmSpec, dir: string): void {
  rmSync(`${cacheFile(stateDir, vm, dir)}.commit`, { force: true });
}

/**
 * The objects of `commit` that `have` (a commit the VM's repository has) lacks, as a thin pack; null when
 * git cannot make it here (`have` unknown to this repository) or it is over the inline limit.
 */
export async function packSince(repoRoot: string, commit: string, have: string): Promise<Buffer | null> {
  return new Promise((res) => {
    const child = spawn('git', ['pack-objects', '--revs', '--thin', '--stdout', '-q'], { cwd: repoRoot, env: gitEnv({}), stdio: ['pipe', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    let size = 0;
    child.stdout.on('data', (d: Buffer) => {
      size += d.length;
      if (size > INLINE_MAX_BYTES) child.kill();
      else out.push(d);
    });
    child.on('error', () => res(null));
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => res(code === 0 && size <= INLINE_MAX_BYTES ? Buffer.concat(out) : null));
    child.stdin.end(`${commit}\n^${have}\n`);
  });
}

/** Pushes `commit` to the VM's bare repository (made on first use). */
export async function gitPush(vm: VmSpec, state: SourceState, commit: string, bare: string, env: NodeJS.ProcessEnv, repoRoot: string = state.root): Promise<void> {
  const t = sshTransport(vm);
  // git appends the quoted repository path to --receive-pack and hands the string to the remote shell.
  const init = `test -d "$1" || git init -q --bare "$1" >&2 || exit 1; exec git receive-pack "$1"`;
  const receivePack = quoteArgv([...t.prefix, 'sh', '-c', init, 'receive-pack']);
  const url = `${t.user ? `${t.user}@` : ''}${t.dest}:${bare}`;
  await spawnCollect(
    'git',
    ['push', '--quiet', '--force', `--receive-pack=${receivePack}`, url, `${commit}:${runRef(state)}`],
    // From the repository itself (for --commit, state.root is where the commit was checked out).
    { cwd: repoRoot, env: gitEnv({ GIT_SSH_COMMAND: sshCommand(vm) }, env) },
    `git push to ${vm.id}:${bare}`,
  );
}

/** A commit id for `ref` in the repository (for --commit). */
export async function resolveCommit(root: string, ref: string): Promise<string> {
  if (ref.startsWith('-')) throw new ConfigError(`--commit ${ref}: not a commit`);
  try {
    return await gitText(root, ['rev-parse', '--verify', '-q', `${ref}^{commit}`]);
  } catch {
    throw new ConfigError(`--commit ${ref}: no such commit in ${root}`);
  }
}

