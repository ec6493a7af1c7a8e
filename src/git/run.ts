// The one way offhost runs git: one environment policy, one runner (async and sync), bounded in time.
//
// Environment policy (every git call in offhost goes through gitEnv):
// - identity and transport variables pass through: GIT_AUTHOR_*/GIT_COMMITTER_* (CI and containers set
//   them instead of a config identity), GIT_SSH*, GIT_ASKPASS, GIT_CONFIG_* (parameterised and file config);
// - the variables that say WHICH repository and index git works on (GIT_DIR, GIT_WORK_TREE,
//   GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, ...) are dropped by default: inside a git hook they describe the
//   hook's own repository state (GIT_INDEX_FILE is `.git/next-index-*.lock` during `git commit <paths>`), and
//   offhost finds the repository from the directory it is given. A caller that means to read exactly what
//   the hook's git is committing (lint --staged) asks for `repoEnv: 'inherit'`;
// - prompts are off (GIT_TERMINAL_PROMPT=0 unless set: a hook has no one to answer), optional index
//   writes are off (GIT_OPTIONAL_LOCKS=0: offhost's reads never take the user's index.lock), messages are
//   in English (LC_ALL=C) because a few are matched.
import { spawn, spawnSync } from 'node:child_process';
import { GitError } from '../errors.js';

/** Variables that select a repository, an index or an object store. */
export const REPO_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_QUARANTINE_PATH',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_INTERNAL_SUPER_PREFIX',
] as const;
const REPO_ENV_SET = new Set<string>(REPO_ENV);
const OBJECT_ENV = new Set(['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH']);

export interface GitCall {
  /** Working directory (the repository, or any folder inside it). */
  cwd: string;
  /** The environment to start from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** 'drop' (default): the repository-selecting variables are removed; 'inherit': kept as given. */
  repoEnv?: 'drop' | 'inherit';
  /** Set last, over the policy (GIT_INDEX_FILE of a private index, an identity fallback). */
  extra?: Record<string, string>;
  /** Bytes written to git's stdin. */
  input?: string | Buffer;
  /** Killed after this long (default 120 s; network commands pass their own). */
  timeoutMs?: number;
  /**
   * An answer this process uses if it comes in time, and does not wait for: git holds neither the event loop
   * nor the process's exit, and a network read still running when the process exits is ended then.
   */
  background?: boolean;
}

export interface GitOutput {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** The environment a git child gets under the policy above. */
export function gitEnv(call: Pick<GitCall, 'env' | 'repoEnv' | 'extra'>): NodeJS.ProcessEnv {
  const base = call.env ?? process.env;
  const out: NodeJS.ProcessEnv = {};
  // In a pre-receive hook the pushed objects exist only in the quarantine these name: keep them (they add
  // objects, they do not point at another repository).
  const quarantine = base.GIT_QUARANTINE_PATH !== undefined;
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined) continue;
    if (call.repoEnv !== 'inherit' && REPO_ENV_SET.has(k) && !(quarantine && OBJECT_ENV.has(k))) continue;
    out[k] = v;
  }
  if (out.GIT_TERMINAL_PROMPT === undefined) out.GIT_TERMINAL_PROMPT = '0';
  out.GIT_OPTIONAL_LOCKS = '0';
  out.LC_ALL = 'C';
  return { ...out, ...(call.extra ?? {}) };
}

function describe(args: string[]): string {
  return `git ${args.slice(0, 3).join(' ')}${args.length > 3 ? ' ...' : ''}`;
}

/** The git commands that only read over the network: ./stopNetworkReads may end them. */
const NETWORK_READS = new Set(['ls-remote', 'fetch']);
/** The process groups of the network reads running now (runGit starts each git in a group of its own). */
const networkReads = new Set<number>();
/**
 * How a network read starts: `git ARGS` (exec'd: the same process, the leader of its own group) beside a
 * watchdog in that group which, once this process is gone, kills the group. A read can take as long as an
 * unreachable remote holds it, and a process killed with SIGKILL (the OOM killer) runs no exit handler
 * (stopNetworkReads): the question and its ssh end within a second of it instead of running on. The
 * watchdog holds none of git's pipes, and is ended with the group when git has answered.
 */
const OUTLIVES_NOTHING = 'p=$PPID; (while kill -0 "$p" 2>/dev/null; do sleep 1; done; kill -9 0) </dev/null >/dev/null 2>&1 & exec git "$@"';
/** Whether stopNetworkReads runs when this process exits (set by the first background read). */
let stopAtExit = false;

/**
 * Ends the network reads this process is running (`git ls-remote`, `git fetch`) with what they started
 * (ssh), for a process about to exit without their answer: started in groups of their own, they would
 * otherwise outlive it, for as long as an unreachable remote holds them. Nothing else is stopped: a local
 * git finishes on its own in moments, and a ref write must not be cut short.
 */
export function stopNetworkReads(): void {
  if (networkReads.size === 0) return;
  for (const pgid of networkReads) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
  networkReads.clear();
}

/** Runs git and collects its output; never throws for a non-zero exit (GitError when git cannot start). */
export function runGit(args: string[], call: GitCall): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    // Its own process group, so that a timeout also stops what git started (ssh for a push, an alias).
    const reads = NETWORK_READS.has(args[0] ?? '');
    const opts = { cwd: call.cwd, env: gitEnv(call), stdio: ['pipe', 'pipe', 'pipe'] as ('pipe')[], detached: true };
    const child = reads ? spawn('/bin/sh', ['-c', OUTLIVES_NOTHING, 'sh', ...args], opts) : spawn('git', args, opts);
    const network = reads && child.pid !== undefined ? child.pid : null;
    if (network !== null) networkReads.add(network);
    if (call.background) {
      child.unref();
      for (const s of [child.stdin, child.stdout, child.stderr] as unknown as { unref?: () => void }[]) s.unref?.();
      // A process that exits while its answer is still coming ends the question with it (never left running).
      if (!stopAtExit) process.once('exit', stopNetworkReads);
      stopAtExit = true;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let settled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, call.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS);
    if (call.background) timer.unref();
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new GitError(`cannot run git (${describe(args)}): ${e.message}`));
    });
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (network !== null) {
        networkReads.delete(network);
        // git has ended: its watchdog (OUTLIVES_NOTHING) goes with what is left of its group.
        try {
          process.kill(-network, 'SIGKILL');
        } catch {
          // nothing left
        }
      }
      let stderr = Buffer.concat(err).toString('utf8');
      if (timedOut) stderr = `${describe(args)} did not finish within ${Math.round((call.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS) / 1000)} s and was stopped\n${stderr}`;
      resolve({ code: timedOut ? 124 : (code ?? 1), stdout: Buffer.concat(out), stderr });
    };
    child.on('close', finish);
    // After a timeout, a grandchild that escaped the group may still hold the pipes: do not wait for them.
    child.on('exit', (code) => {
      if (!timedOut) return;
      child.stdout.destroy();
      child.stderr.destroy();
      finish(code);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(call.input ?? '');
  });
}

/** runGit for synchronous callers (ci, scan, init). */
export function runGitSync(args: string[], call: GitCall): GitOutput {
  const r = spawnSync('git', args, {
    cwd: call.cwd,
    env: gitEnv(call),
    input: call.input ?? '',
    maxBuffer: 2 ** 31 - 1,
    timeout: call.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code !== 'ETIMEDOUT') throw new GitError(`cannot run git (${describe(args)}): ${r.error.message}`);
  const stderr = r.stderr ? r.stderr.toString('utf8') : '';
  if (r.error) return { code: 124, stdout: r.stdout ?? Buffer.alloc(0), stderr: `${describe(args)} did not finish in time and was stopped\n${stderr}` };
  return { code: r.status ?? 1, stdout: r.stdout ?? Buffer.alloc(0), stderr };
}

function failure(args: string[], r: GitOutput): GitError {
  return new GitError(`${describe(args)} failed: ${r.stderr.trim().split('\n').slice(0, 4).join(' / ') || `exit ${r.code}`}`);
}

/** stdout of a git command that must succeed (GitError with git's first lines otherwise). */
export async function gitOk(args: string[], call: GitCall): Promise<Buffer> {
  const r = await runGit(args, call);
  if (r.code !== 0) throw failure(args, r);
  return r.stdout;
}

export function gitOkSync(args: string[], call: GitCall): Buffer {
  const r = runGitSync(args, call);
  if (r.code !== 0) throw failure(args, r);
  return r.stdout;
}

/** Trimmed text stdout of a git command that must succeed. */
export async function gitText(args: string[], call: GitCall): Promise<string> {
  return (await gitOk(args, call)).toString('utf8').trim();
}

/** The top of the working tree holding `cwd`, or null when it is in none. */
export function topLevelSync(cwd: string, env?: NodeJS.ProcessEnv): string | null {
  const r = runGitSync(['rev-parse', '--show-toplevel'], { cwd, ...(env ? { env } : {}) });
  return r.code === 0 ? r.stdout.toString('utf8').trim() || null : null;
}
