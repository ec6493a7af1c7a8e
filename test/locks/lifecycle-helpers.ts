// Helpers for the lock lifecycle, race and run tests: real temp git repositories and the built CLI.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { offhostInProcess } from '../helpers/in-process.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI (OFFHOST_TEST_BIN points at another build, e.g. a private one while dist/ is being rebuilt). */
export const BIN = process.env.OFFHOST_TEST_BIN ?? join(ROOT, 'dist', 'offhost.mjs');
export const VM = 's.khost1.dev-linux-koda';
export const ACTIVE = `meta/context/notices/vm-active/lock-${VM}.md`;
export const ARCHIVE_DIR = 'meta/context/notices/vm-active-archive';

/** Builds dist/ once if it is missing (npm test builds it in pretest). */
export function ensureBuilt(): void {
  if (!existsSync(BIN)) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
}

/** Every temp folder these helpers make, removed after the test file (vitest runs this per file). */
const made: string[] = [];
function tempFolder(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}
afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

const HOME = tempFolder('offhost-home-');

/** An environment for git and offhost with no ambient identity, session or CI role. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('GIT_') || k.startsWith('OFFHOST_') || k === 'CI') continue;
    env[k] = v;
  }
  return { ...env, HOME: HOME, GIT_CONFIG_NOSYSTEM: '1', OFFHOST_ROLE: 'laptop', ...extra };
}

export function g(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A fresh repository with one commit and an identity. */
export function tempRepo(name = 'repo'): string {
  const dir = join(tempFolder('offhost-lock-'), name);
  mkdirSync(dir, { recursive: true });
  g(dir, 'init', '-q', '-b', 'main');
  configure(dir);
  // A root commit of its own: the lock store is per repository identity (its first root commit), and two
  // repositories made alike in the same second would otherwise be one repository to offhost.
  writeFileSync(join(dir, 'README.md'), `# test repo ${Math.random().toString(36).slice(2)}\n`);
  writeFileSync(join(dir, 'a.txt'), 'a\n');
  writeFileSync(join(dir, 'b.txt'), 'b\n');
  g(dir, 'add', 'README.md', 'a.txt', 'b.txt');
  g(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

export function configure(dir: string): void {
  g(dir, 'config', 'user.email', 'dev@example.test');
  g(dir, 'config', 'user.name', 'Dev');
  g(dir, 'config', 'commit.gpgsign', 'false');
}

/** A bare remote seeded with one commit, and `n` clones of it. */
export function bareWithClones(n: number): { bare: string; clones: string[] } {
  const seed = tempRepo('seed');
  const base = dirname(seed);
  const bare = join(base, 'remote.git');
  g(base, 'clone', '-q', '--bare', seed, bare);
  const clones: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = join(base, `clone${i}`);
    g(base, 'clone', '-q', bare, c);
    configure(c);
    clones.push(c);
  }
  return { bare, clones };
}

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let inProcess = false;
/**
 * From here on in this test file, offhost() calls the CLI in this process (test/helpers/in-process.ts)
 * instead of spawning the built executable: for files about what lock commands decide and write. Files
 * about processes (races between processes, claims, spawn counts) keep spawning.
 */
export function cliInProcess(): void {
  inProcess = true;
}

/** Runs `offhost ...args` in `cwd`: `node dist/offhost.mjs`, or in this process after cliInProcess(). */
export function offhost(args: string[], opts: { cwd: string; env?: Record<string, string>; baseEnv?: NodeJS.ProcessEnv; progress?: { stderr: string }; ownProcess?: boolean }): Promise<Result> {
  const env = { ...(opts.baseEnv ?? cleanEnv()), ...(opts.env ?? {}) };
  // Calls that overlap (a race, a waiter) are separate processes, as a user's are: in one process a
  // command's synchronous waits would block the very holder it waits for.
  if (inProcess && !opts.ownProcess) return offhostInProcess(args, { cwd: opts.cwd, env, ...(opts.progress ? { progress: opts.progress } : {}) });
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      if (opts.progress) opts.progress.stderr = stderr;
    });
    child.on('error', rej);
    child.on('close', (code, signal) => res({ code, signal, stdout, stderr }));
  });
}

/** Everything about the user's work that must survive a lock operation. */
export function snapshot(dir: string, files: string[]): string {
  const parts = [
    `index:\n${g(dir, 'ls-files', '-s', '--', ...files)}`,
    `cached:\n${g(dir, 'diff', '--cached', '--', ...files)}`,
    `worktree:\n${g(dir, 'diff', '--', ...files)}`,
  ];
  for (const f of files) parts.push(`${f}: ${existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : '<absent>'}`);
  return parts.join('\n');
}

/** Stages and leaves unstaged changes of every kind a user may have in other files. */
export function makeUserWork(dir: string): string[] {
  writeFileSync(join(dir, 'a.txt'), 'a\nstaged change\n');
  g(dir, 'add', 'a.txt');
  writeFileSync(join(dir, 'a.txt'), 'a\nstaged change\nthen an unstaged one on top\n');
  writeFileSync(join(dir, 'b.txt'), 'b\nunstaged only\n');
  writeFileSync(join(dir, 'new.txt'), 'a new file, staged\n');
  g(dir, 'add', 'new.txt');
  writeFileSync(join(dir, 'untracked.txt'), 'never added\n');
  return ['a.txt', 'b.txt', 'new.txt', 'untracked.txt'];
}

/** The lock ref every lock operation commits to (the user's branch never carries offhost's locks). */
export const REF = 'refs/offhost/locks';

/** File names under `sub` (default the VM archive) on the lock ref of `dir` (a clone or a bare remote). */
export function archives(dir: string, sub = ARCHIVE_DIR, ref = REF): string[] {
  const r = spawnSync('git', ['ls-tree', '--name-only', `${ref}:${sub}`], { cwd: dir, encoding: 'utf8', env: cleanEnv() });
  return r.status === 0 ? r.stdout.split('\n').filter(Boolean).sort() : [];
}

/** A file's content on the lock ref (the view at the policy's path shows the same for active locks). */
export function read(dir: string, rel: string, ref = REF): string {
  const r = spawnSync('git', ['show', `${ref}:${rel}`], { cwd: dir, encoding: 'utf8', env: cleanEnv() });
  if (r.status !== 0) throw new Error(`${ref}:${rel} is not on the lock ref: ${r.stderr}`);
  return r.stdout;
}

/** A working-tree file (the view, or the user's files). */
export function readFile(dir: string, rel: string): string {
  return readFileSync(join(dir, rel), 'utf8');
}

/** Subjects of the lock ref's commits, newest first. */
export function refLog(dir: string, ref = REF): string[] {
  const r = spawnSync('git', ['log', '--format=%s', ref], { cwd: dir, encoding: 'utf8', env: cleanEnv() });
  return r.status === 0 ? r.stdout.trim().split('\n').filter(Boolean) : [];
}

export function sessionEnv(session: string, ai = 'claude'): Record<string, string> {
  return { OFFHOST_SESSION: session, OFFHOST_AI: ai };
}

/** Private files offhost left in a clone's git directory and in the user stores (none after any command). */
export function strayPrivateFiles(dir: string): string[] {
  const out: string[] = [];
  const tmpOf = (gitDir: string) => {
    try {
      for (const n of readdirSync(join(gitDir, 'offhost', 'tmp'))) out.push(join(gitDir, 'offhost', 'tmp', n));
    } catch {
      /* none */
    }
  };
  tmpOf(join(dir, '.git'));
  const stores = join(HOME, '.local/state/offhost/lock-stores');
  try {
    for (const s of readdirSync(stores)) tmpOf(join(stores, s));
  } catch {
    /* none */
  }
  return out;
}

/** The user stores of this test file's HOME. */
export function userStores(): string[] {
  const dir = join(HOME, '.local/state/offhost/lock-stores');
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.git')).map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** The user store the repository `dir` goes through (by the store-id offhost cached in its git directory). */
export function userStoreOf(dir: string): string {
  const id = readFileSync(join(dir, '.git', 'offhost', 'store-id'), 'utf8').trim();
  const s = userStores().find((p) => p.endsWith(`${id}.git`));
  if (!s) throw new Error(`no user store for ${dir}`);
  return s;
}
